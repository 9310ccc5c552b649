//! A bought commitment's use in its state (`used_instances`, `utilization`,
//! `idle_monthly_usd`, read at each refresh) and the plan's warning when it runs under half.

use gpu_core::commitment::usage::{
    CommitmentUse, idle_monthly_usd, is_low, monthly_equivalent_usd,
};
use gpu_core::cost::format_usd;
use tfplugin::{Diagnostic, Value};

use super::model::CommitmentModel;
use super::plan::{decimal, set};
use crate::model_values::text;

/// Sets the use attributes of `state` from what the cloud reports; null where it cannot
/// say (a measured zero and an unknown are never the same number).
pub fn record(state: &mut Value, in_use: Option<&CommitmentUse>) {
    let m = CommitmentModel::of(state);
    let equivalent = monthly_equivalent_usd(
        m.monthly_usd.into_known(),
        m.upfront_usd.into_known(),
        m.effective_usd_per_gpu_hour.into_known(),
        m.gpus.into_known(),
    );
    let idle = in_use.and_then(|u| Some(idle_monthly_usd(equivalent?, u)));
    let num = |x: Option<f64>| x.map_or(Value::Null, decimal);
    set(
        state,
        "used_instances",
        in_use.map_or(Value::Null, |u| Value::number(u.used_instances)),
    );
    set(
        state,
        "utilization",
        num(in_use.map(|u| round4(u.utilization))),
    );
    set(state, "idle_monthly_usd", num(idle.map(round2)));
}

/// The warning a plan shows for an active commitment that ran under half at the last
/// refresh, with the money its unused share costs a month.
pub fn low_use_warning(prior: &Value) -> Option<Diagnostic> {
    let m = CommitmentModel::of(prior);
    if text(&m.status) != "active" {
        return None;
    }
    let utilization = m.utilization.into_known()?;
    let used = m.used_instances.into_known()?;
    let held = m.instance_count.into_known()?;
    let in_use = CommitmentUse {
        used_instances: used as u32,
        utilization,
    };
    if !is_low(&in_use) {
        return None;
    }
    let percent = (utilization * 100.0).round();
    let idle = m.idle_monthly_usd.into_known();
    let summary = match idle {
        Some(usd) => format!("Commitment {percent}% used: {}/month idle", format_usd(usd)),
        None => format!("Commitment {percent}% used"),
    };
    let money = match idle {
        Some(usd) => format!(
            " Its unused share costs {}/month at the commitment's effective rate.",
            format_usd(usd)
        ),
        None => String::new(),
    };
    Some(Diagnostic::warning(
        summary,
        format!(
            "{} {} had {used} of {held} instances in use at the last refresh.{money} \
             Point a pool at it (a `gpu_node_pool`'s `reservation` block) or let it end.",
            text(&m.kind),
            text(&m.commitment_id),
        ),
    ))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bought(status: &str) -> Value {
        Value::object([
            ("kind", Value::string("aws_capacity_reservation")),
            ("commitment_id", Value::string("cr-1")),
            ("status", Value::string(status)),
            ("instance_count", Value::number(4)),
            ("gpus", Value::number(32)),
            ("effective_usd_per_gpu_hour", Value::number(3)),
        ])
    }

    #[test]
    fn record_sets_use_and_idle_money_and_nulls_what_the_cloud_cannot_say() {
        let mut s = bought("active");
        record(&mut s, CommitmentUse::counted(1, 4).as_ref());
        let m = CommitmentModel::of(&s);
        assert_eq!(m.used_instances.into_known(), Some(1.0));
        assert_eq!(m.utilization.into_known(), Some(0.25));
        // 32 GPUs x $3 x 730 h x 75 % idle.
        assert_eq!(m.idle_monthly_usd.into_known(), Some(52_560.0));
        record(&mut s, None);
        let m = CommitmentModel::of(&s);
        assert!(m.used_instances.is_null() && m.utilization.is_null());
        assert!(m.idle_monthly_usd.is_null());
    }

    #[test]
    fn only_an_active_commitment_under_half_warns() {
        let mut s = bought("active");
        record(&mut s, CommitmentUse::counted(1, 4).as_ref());
        let w = low_use_warning(&s).expect("25 % used warns");
        assert_eq!(w.summary, "Commitment 25% used: $52,560.00/month idle");
        assert!(
            w.detail.contains("had 1 of 4 instances in use"),
            "{}",
            w.detail
        );
        record(&mut s, CommitmentUse::counted(2, 4).as_ref());
        assert!(low_use_warning(&s).is_none(), "half is not low");
        let mut scheduled = bought("scheduled");
        record(&mut scheduled, CommitmentUse::counted(0, 4).as_ref());
        assert!(low_use_warning(&scheduled).is_none(), "not started yet");
        assert!(low_use_warning(&bought("active")).is_none(), "use unknown");
    }
}
