//! Property tests: generated `(Type, Value)` pairs round-trip through both
//! codecs, and arbitrary or mutated bytes never make a decoder panic.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;

use super::*;

const NAMES: &[&str] = &["a", "b", "count", "gpu_id", "x y", "ü"];

fn arb_type() -> impl Strategy<Value = Type> {
    let leaf = prop_oneof![
        Just(Type::Bool),
        Just(Type::Number),
        Just(Type::String),
        Just(Type::Dynamic),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(Type::list),
            inner.clone().prop_map(Type::set),
            inner.clone().prop_map(Type::map),
            vec(inner.clone(), 0..4).prop_map(Type::Tuple),
            (
                btree_map(proptest::sample::select(NAMES), inner, 0..4),
                any::<bool>()
            )
                .prop_map(|(attrs, opt)| {
                    let first: Vec<String> = attrs
                        .keys()
                        .take(usize::from(opt))
                        .map(|k| k.to_string())
                        .collect();
                    Type::object_with_optional(attrs, first)
                }),
        ]
    })
}

fn arb_number() -> BoxedStrategy<Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Number::from),
        "[1-9][0-9]{19,40}".prop_map(|s| s.parse::<Number>().unwrap()),
        "-?(0|[1-9][0-9]{0,5})\\.[0-9]{1,25}".prop_map(|s| s.parse::<Number>().unwrap()),
        "[1-9]\\.[0-9]{1,5}e-?[1-9][0-9]{0,2}".prop_map(|s| s.parse::<Number>().unwrap()),
    ]
    .boxed()
}

fn arb_unknown(ty: &Type) -> BoxedStrategy<Value> {
    let not_null = proptest::option::of(any::<bool>());
    let bound = || {
        proptest::option::of(
            (arb_number(), any::<bool>())
                .prop_map(|(value, inclusive)| NumberBound { value, inclusive }),
        )
    };
    let s = match ty {
        Type::Dynamic => return Just(Value::unknown()).boxed(),
        Type::String => (not_null, proptest::option::of(".+"))
            .prop_map(|(not_null, string_prefix)| Refinements {
                not_null,
                string_prefix,
                ..Refinements::default()
            })
            .boxed(),
        Type::Number => (not_null, bound(), bound())
            .prop_map(|(not_null, number_lower, number_upper)| Refinements {
                not_null,
                number_lower,
                number_upper,
                ..Refinements::default()
            })
            .boxed(),
        t if t.is_collection() => (
            not_null,
            proptest::option::of(any::<u64>()),
            proptest::option::of(any::<u64>()),
        )
            .prop_map(|(not_null, length_lower, length_upper)| Refinements {
                not_null,
                length_lower,
                length_upper,
                ..Refinements::default()
            })
            .boxed(),
        _ => not_null
            .prop_map(|not_null| Refinements {
                not_null,
                ..Refinements::default()
            })
            .boxed(),
    };
    s.prop_map(|refinements| Value::Unknown(Unknown { refinements }))
        .boxed()
}

/// A value conforming to `ty`. `dyn_budget` bounds how many levels of
/// dynamic values may pick a fresh nested type.
fn arb_value(ty: &Type, dyn_budget: u32, unknowns: bool) -> BoxedStrategy<Value> {
    let known: BoxedStrategy<Value> = match ty {
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Number => arb_number().prop_map(Value::Number).boxed(),
        Type::String => any::<String>().prop_map(Value::String).boxed(),
        Type::List(t) => vec(arb_value(t, dyn_budget, unknowns), 0..4)
            .prop_map(Value::List)
            .boxed(),
        Type::Set(t) => vec(arb_value(t, dyn_budget, unknowns), 0..4)
            .prop_map(Value::Set)
            .boxed(),
        Type::Map(t) => btree_map(".{0,6}", arb_value(t, dyn_budget, unknowns), 0..4)
            .prop_map(Value::Map)
            .boxed(),
        Type::Tuple(ts) => ts
            .iter()
            .map(|t| arb_value(t, dyn_budget, unknowns))
            .collect::<Vec<_>>()
            .prop_map(Value::Tuple)
            .boxed(),
        Type::Object(o) => o
            .attributes
            .iter()
            .map(|(k, t)| {
                let k = k.clone();
                arb_value(t, dyn_budget, unknowns).prop_map(move |v| (k.clone(), v))
            })
            .collect::<Vec<_>>()
            .prop_map(|kvs| Value::Object(kvs.into_iter().collect()))
            .boxed(),
        Type::Dynamic => {
            let inner_ty: BoxedStrategy<Type> = if dyn_budget == 0 {
                prop_oneof![Just(Type::Bool), Just(Type::Number), Just(Type::String)].boxed()
            } else {
                arb_type().boxed()
            };
            inner_ty
                .prop_flat_map(move |t| {
                    arb_value(&t, dyn_budget.saturating_sub(1), unknowns)
                        .prop_map(move |v| Value::Dynamic(t.clone(), Box::new(v)))
                })
                .boxed()
        }
    };
    if unknowns {
        prop_oneof![1 => Just(Value::Null), 1 => arb_unknown(ty), 4 => known].boxed()
    } else {
        prop_oneof![1 => Just(Value::Null), 4 => known].boxed()
    }
}

fn arb_typed(unknowns: bool) -> impl Strategy<Value = (Type, Value)> {
    arb_type().prop_flat_map(move |t| {
        let vs = arb_value(&t, 2, unknowns);
        (Just(t), vs)
    })
}

fn same(a: &Value, b: &Value) -> bool {
    a.semantically_equal(b)
}

proptest! {

    #[test]
    fn type_json_roundtrip(t in arb_type()) {
        prop_assert_eq!(Type::from_json(&t.to_json()).unwrap(), t.clone());
        prop_assert_eq!(Type::from_json_bytes(&t.to_json_bytes()).unwrap(), t);
    }

    #[test]
    fn msgpack_roundtrip((ty, v) in arb_typed(true)) {
        let bytes = encode_msgpack(&v, &ty).unwrap();
        let back = decode_msgpack(&bytes, &ty).unwrap();
        prop_assert!(same(&v, &back), "{:?}\n!=\n{:?}", v, back);
        prop_assert_eq!(encode_msgpack(&back, &ty).unwrap(), bytes);
    }

    #[test]
    fn json_roundtrip((ty, v) in arb_typed(false)) {
        let bytes = encode_json(&v, &ty).unwrap();
        let back = decode_json(&bytes, &ty).unwrap();
        prop_assert!(same(&v, &back), "{:?}\n!=\n{:?}", v, back);
        prop_assert_eq!(encode_json(&back, &ty).unwrap(), bytes);
        // The generic serde bridge reads anything known.
        let _: serde_json::Value = from_value(&v).unwrap();
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..256)) {
        fuzz_decode_all(&bytes);
    }

    #[test]
    fn jsonish_text_never_panics(text in "[\\[\\]{}\":,0-9a-z.eE+\\- \\\\u]{0,64}") {
        fuzz_decode_all(text.as_bytes());
    }

    #[test]
    fn mutated_encodings_never_panic(
        (ty, v) in arb_typed(true),
        edits in vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = encode_msgpack(&v, &ty).unwrap();
        for (at, b) in edits {
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
        }
        let _ = decode_msgpack(&bytes, &ty);
        fuzz_decode_all(&bytes);
        let n = cut.index(bytes.len() + 1);
        fuzz_decode_all(&bytes[..n]);
        let _ = decode_msgpack(&bytes[..n], &ty);
        if let Ok(json) = encode_json(&v, &ty) {
            fuzz_decode_all(&json);
            let _ = decode_json(&json[..cut.index(json.len() + 1)], &ty);
        }
    }
}
