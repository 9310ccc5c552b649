//! Provider-defined functions (Terraform 1.8 and later): `provider::gpu::commitment_size`,
//! the `gpu_commitment_sizing` answer as an expression.

use async_trait::async_trait;
use gpu_core::commitment::{self, SizingInput};
use tfplugin::{Function, FunctionError, FunctionSignature, Parameter, Type, Value};

use crate::data_sources::commitment_sizing::{
    commitment_type, commitment_value, curve_type, curve_value, num,
};

/// `commitment_size(hourly_gpus, commit_usd_per_gpu_hour, burst_usd_per_gpu_hour)`.
#[derive(Debug, Clone, Copy)]
pub struct CommitmentSize;

fn result_type() -> Type {
    Type::object([
        ("hours", Type::Number),
        ("floor_gpus", Type::Number),
        ("optimal_gpus", Type::Number),
        ("break_even_utilization", Type::Number),
        ("floor", commitment_type()),
        ("optimal", commitment_type()),
        ("curve", curve_type()),
    ])
}

#[async_trait]
impl Function for CommitmentSize {
    fn name(&self) -> &str {
        "commitment_size"
    }

    fn signature(&self) -> FunctionSignature {
        FunctionSignature {
            summary: "Sizes a commitment to an hourly GPU demand history".into(),
            description: "The floor (the minimum hourly demand) and the count that minimises `N × commit × hours` plus the GPU-hours above `N` at the burst price, with each one's money (`commit_usd`, `burst_usd`, `total_usd`, `utilization`), `break_even_utilization` (`commit / burst`) and the cost curve: the `gpu_commitment_sizing` data source's answer for given prices, as an expression.".into(),
            parameters: vec![
                Parameter::new("hourly_gpus", Type::list(Type::Number), "Concurrent GPUs in use, one number per hour (0 or more)."),
                Parameter::new("commit_usd_per_gpu_hour", Type::Number, "Price of one committed GPU-hour in USD."),
                Parameter::new("burst_usd_per_gpu_hour", Type::Number, "Price of one GPU-hour above the commitment in USD."),
            ],
            returns: result_type(),
        }
    }

    async fn call(&self, arguments: Vec<Value>) -> Result<Value, FunctionError> {
        let number = |i: usize| {
            arguments
                .get(i)
                .and_then(Value::as_number)
                .map(|n| n.as_f64())
        };
        let hourly: Vec<f64> = arguments
            .first()
            .and_then(Value::as_elements)
            .unwrap_or_default()
            .iter()
            .map(|v| v.as_number().map_or(f64::NAN, |n| n.as_f64()))
            .collect();
        let input = SizingInput {
            hourly_gpus: hourly,
            commit_usd_per_gpu_hour: number(1).unwrap_or(f64::NAN),
            burst_usd_per_gpu_hour: number(2).unwrap_or(f64::NAN),
            floor_percentile: 0.0,
            on_demand_usd_per_gpu_hour: None,
            spot_usd_per_gpu_hour: None,
        };
        let s = commitment::size(&input).map_err(|e| {
            let argument = match &e {
                commitment::SizingError::BadPrice { name, .. }
                    if *name == "commit_usd_per_gpu_hour" =>
                {
                    1
                }
                commitment::SizingError::BadPrice { .. } => 2,
                _ => 0,
            };
            FunctionError::argument(argument, e.to_string())
        })?;
        Ok(Value::object([
            ("hours", Value::number(s.hours as i64)),
            ("floor_gpus", Value::number(i64::from(s.floor.gpus))),
            ("optimal_gpus", Value::number(i64::from(s.optimal.gpus))),
            (
                "break_even_utilization",
                num(Some(s.break_even_utilization)),
            ),
            ("floor", commitment_value(&s.floor)),
            ("optimal", commitment_value(&s.optimal)),
            ("curve", curve_value(&s)),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(v: &[f64]) -> Value {
        Value::List(v.iter().map(|x| Value::number(*x)).collect())
    }

    #[tokio::test]
    async fn sizes_and_names_the_bad_argument() {
        let mut hourly = vec![4.0; 75];
        hourly.extend([10.0; 25]);
        let v = CommitmentSize
            .call(vec![nums(&hourly), Value::number(1.0), Value::number(2.0)])
            .await
            .unwrap();
        assert_eq!(
            v.get_attr("optimal_gpus")
                .and_then(Value::as_number)
                .map(|n| n.as_f64()),
            Some(4.0)
        );
        let e = CommitmentSize
            .call(vec![nums(&[1.0]), Value::number(1.0), Value::number(0.0)])
            .await
            .unwrap_err();
        assert_eq!(e.argument, Some(2));
        let e = CommitmentSize
            .call(vec![nums(&[]), Value::number(1.0), Value::number(2.0)])
            .await
            .unwrap_err();
        assert_eq!(e.argument, Some(0));
        assert!(e.text.contains("empty"), "{}", e.text);
    }
}
