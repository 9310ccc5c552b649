//! Hand-written wire fixtures for the codecs and the serde bridge.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Decodes, checks the value, and checks that encoding gives the same bytes.
fn fixture(bytes: &[u8], ty: &Type, want: &Value) {
    let got = decode_msgpack(bytes, ty).unwrap();
    assert_eq!(&got, want);
    assert_eq!(
        encode_msgpack(&got, ty).unwrap(),
        bytes,
        "re-encoding {want:?}"
    );
}

fn bytes_of(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn null_and_plain_unknown() {
    for ty in [Type::String, Type::Dynamic, Type::list(Type::Number)] {
        fixture(&[0xc0], &ty, &Value::Null);
        fixture(&[0xd4, 0x00, 0x00], &ty, &Value::unknown());
    }
    // Any other extension is an unknown too, payload ignored.
    for b in [
        "d4 05 00",
        "c7 00 00",
        "d5 00 01 02",
        "c7 01 0c 00",
        "c7 02 07 01 02",
    ] {
        let v = decode_msgpack(&hex(b), &Type::Number).unwrap();
        assert_eq!(v, Value::unknown(), "{b}");
    }
}

#[test]
fn refined_unknown_string_prefix_not_null() {
    // What Terraform 1.6+ sends for e.g. "gpu-${random}" : ext 12 with
    // {1: false (not null), 2: "gpu-"}.
    let bytes = hex("c7 09 0c 82 01 c2 02 a4 67 70 75 2d");
    let want = Value::Unknown(Unknown {
        refinements: Refinements {
            not_null: Some(true),
            string_prefix: Some("gpu-".into()),
            ..Refinements::default()
        },
    });
    fixture(&bytes, &Type::String, &want);
    // Refinements are ignored for dynamic slots.
    assert_eq!(
        decode_msgpack(&bytes, &Type::Dynamic).unwrap(),
        Value::unknown()
    );
    // A string prefix does not apply to numbers.
    assert!(decode_msgpack(&bytes, &Type::Number).is_err());
}

#[test]
fn refined_unknown_number_and_length() {
    // {1: false, 3: [0, true], 4: [10.5, false]}
    let bytes = hex("c7 13 0c 83 01 c2 03 92 00 c3 04 92 cb 40 25 00 00 00 00 00 00 c2");
    let want = Value::Unknown(Unknown {
        refinements: Refinements {
            not_null: Some(true),
            number_lower: Some(NumberBound {
                value: 0.into(),
                inclusive: true,
            }),
            number_upper: Some(NumberBound {
                value: 10.5.into(),
                inclusive: false,
            }),
            ..Refinements::default()
        },
    });
    fixture(&bytes, &Type::Number, &want);

    // {5: 1, 6: 10} on a list: fixext 4 would be 5 bytes, so ext8.
    let bytes = hex("c7 05 0c 82 05 01 06 0a");
    let want = Value::Unknown(Unknown {
        refinements: Refinements {
            length_lower: Some(1),
            length_upper: Some(10),
            ..Refinements::default()
        },
    });
    fixture(&bytes, &Type::list(Type::String), &want);
    // {1: false} alone is a 3-byte payload: ext8 as well.
    fixture(
        &hex("c7 03 0c 81 01 c2"),
        &Type::set(Type::Bool),
        &Value::Unknown(Unknown::not_null()),
    );
    // An empty prefix is no refinement at all.
    let enc = encode_msgpack(
        &Value::Unknown(Unknown {
            refinements: Refinements {
                string_prefix: Some(String::new()),
                not_null: None,
                ..Refinements::default()
            },
        }),
        &Type::String,
    )
    .unwrap();
    assert_eq!(enc, hex("d4 00 00"), "empty prefix is no refinement");
    // Unknown future keys are skipped.
    let v = decode_msgpack(&hex("c7 07 0c 82 63 92 01 02 01 c2"), &Type::String).unwrap();
    assert_eq!(v, Value::Unknown(Unknown::not_null()));
    // Refinements not applicable to the type are dropped on encode.
    let enc = encode_msgpack(
        &Value::Unknown(Unknown {
            refinements: Refinements {
                string_prefix: Some("x".into()),
                ..Refinements::default()
            },
        }),
        &Type::Number,
    )
    .unwrap();
    assert_eq!(enc, hex("d4 00 00"));
}

#[test]
fn primitives() {
    fixture(&[0xc3], &Type::Bool, &Value::Bool(true));
    fixture(&[0xc2], &Type::Bool, &Value::Bool(false));
    fixture(&hex("a2 68 69"), &Type::String, &Value::string("hi"));
    fixture(&[0x7f], &Type::Number, &Value::from(127));
    fixture(&[0xff], &Type::Number, &Value::from(-1));
    fixture(&hex("cc ff"), &Type::Number, &Value::from(255));
    fixture(&hex("d0 80"), &Type::Number, &Value::from(-128));
    fixture(&hex("cd 01 00"), &Type::Number, &Value::from(256));
    fixture(
        &hex("d3 80 00 00 00 00 00 00 00"),
        &Type::Number,
        &Value::from(i64::MIN),
    );
    fixture(
        &hex("cf ff ff ff ff ff ff ff ff"),
        &Type::Number,
        &Value::Number(u64::MAX.into()),
    );
    // float64 1.5
    fixture(
        &hex("cb 3f f8 00 00 00 00 00 00"),
        &Type::Number,
        &Value::from(1.5),
    );
    // Non-compact encodings are accepted and canonicalized.
    assert_eq!(
        decode_msgpack(&hex("d3 00 00 00 00 00 00 00 05"), &Type::Number).unwrap(),
        Value::from(5)
    );
    assert_eq!(
        decode_msgpack(&hex("cb 40 14 00 00 00 00 00 00"), &Type::Number).unwrap(),
        Value::from(5)
    );
    assert_eq!(
        decode_msgpack(&hex("ca 3f c0 00 00"), &Type::Number).unwrap(),
        Value::from(1.5)
    );
    // Big number as a string keeps every digit.
    let text = "12345678901234567890123";
    let bytes = bytes_of(&[&[0xa0 | text.len() as u8], text.as_bytes()]);
    let v = decode_msgpack(&bytes, &Type::Number).unwrap();
    assert_eq!(v.as_number().unwrap().to_string(), text);
    assert_eq!(encode_msgpack(&v, &Type::Number).unwrap(), bytes);
    assert_eq!(encode_json(&v, &Type::Number).unwrap(), text.as_bytes());
    // A decimal that has no exact float stays text.
    fixture(
        &hex("a3 30 2e 31"),
        &Type::Number,
        &Value::Number("0.1".parse().unwrap()),
    );
    // Integral strings become integers.
    assert_eq!(
        decode_msgpack(&hex("a2 34 32"), &Type::Number).unwrap(),
        Value::from(42)
    );
}

fn gpu_node_type() -> Type {
    Type::object([
        ("name", Type::String),
        (
            "gpus",
            Type::list(Type::object([
                ("index", Type::Number),
                ("model", Type::String),
            ])),
        ),
    ])
}

#[test]
fn nested_object_with_list_of_objects() {
    let ty = gpu_node_type();
    let bytes = bytes_of(&[
        &[0x82, 0xa4],
        b"gpus",
        &[0x91, 0x82, 0xa5],
        b"index",
        &[0x00, 0xa5],
        b"model",
        &[0xa4],
        b"a100",
        &[0xa4],
        b"name",
        &[0xa2],
        b"n1",
    ]);
    let want = Value::object([
        ("name", Value::string("n1")),
        (
            "gpus",
            Value::List(vec![Value::object([
                ("index", Value::from(0)),
                ("model", Value::string("a100")),
            ])]),
        ),
    ]);
    fixture(&bytes, &ty, &want);
    // Attributes absent from the value are written as nil.
    let partial = Value::object([("name", Value::string("n1"))]);
    let enc = encode_msgpack(&partial, &ty).unwrap();
    let dec = decode_msgpack(&enc, &ty).unwrap();
    assert_eq!(dec.get_attr("gpus"), Some(&Value::Null));
    // Absent attributes on the wire decode as null.
    let dec = decode_msgpack(&bytes_of(&[&[0x81, 0xa4], b"name", &[0xc0]]), &ty).unwrap();
    assert_eq!(
        dec,
        Value::object([("name", Value::Null), ("gpus", Value::Null)])
    );
    // JSON of the same value.
    let json = encode_json(&want, &ty).unwrap();
    assert_eq!(
        String::from_utf8(json.clone()).unwrap(),
        r#"{"gpus":[{"index":0,"model":"a100"}],"name":"n1"}"#
    );
    assert_eq!(decode_json(&json, &ty).unwrap(), want);
}

#[test]
fn dynamic_values() {
    let bytes = bytes_of(&[&[0x92, 0xc4, 8], b"\"string\"", &[0xa2], b"hi"]);
    fixture(
        &bytes,
        &Type::Dynamic,
        &Value::Dynamic(Type::String, Box::new(Value::string("hi"))),
    );
    let tj = br#"["list","number"]"#;
    let bytes = bytes_of(&[&[0x92, 0xc4, tj.len() as u8], tj, &[0x92, 0x01, 0x02]]);
    let want = Value::Dynamic(
        Type::list(Type::Number),
        Box::new(Value::List(vec![Value::from(1), Value::from(2)])),
    );
    fixture(&bytes, &Type::Dynamic, &want);
    // Type JSON as a msgpack string is accepted too.
    let alt = bytes_of(&[&[0x92, 0xb1], tj, &[0x92, 0x01, 0x02]]);
    assert_eq!(decode_msgpack(&alt, &Type::Dynamic).unwrap(), want);
    // An unwrapped value in a dynamic slot gets its implied type.
    assert_eq!(
        encode_msgpack(&Value::List(vec![1.into(), 2.into()]), &Type::Dynamic).unwrap(),
        bytes
    );
    // A wrapper in a typed slot is transparent.
    assert_eq!(
        encode_msgpack(&want, &Type::list(Type::Number)).unwrap(),
        hex("92 01 02")
    );
    // JSON form.
    let j = encode_json(&want, &Type::Dynamic).unwrap();
    assert_eq!(j, br#"{"value":[1,2],"type":["list","number"]}"#);
    assert_eq!(decode_json(&j, &Type::Dynamic).unwrap(), want);
    let j = br#"{"type":"string","value":"x"}"#;
    assert_eq!(
        decode_json(j, &Type::Dynamic).unwrap(),
        Value::Dynamic(Type::String, Box::new(Value::string("x")))
    );
    assert_eq!(decode_json(b"null", &Type::Dynamic).unwrap(), Value::Null);
    for bad in [
        &br#"{"value":1}"#[..],
        br#"{"type":"number"}"#,
        br#"[1]"#,
        br#"{"type":"nope","value":1}"#,
    ] {
        assert!(decode_json(bad, &Type::Dynamic).is_err());
    }
    // Dynamic array with the wrong arity.
    assert!(decode_msgpack(&hex("91 c4 00"), &Type::Dynamic).is_err());
}

#[test]
fn sets_encode_deterministically() {
    let ty = Type::set(Type::String);
    let a = Value::Set(vec!["b".into(), "a".into(), "c".into()]);
    let b = Value::Set(vec!["c".into(), "b".into(), "a".into()]);
    assert_eq!(
        encode_msgpack(&a, &ty).unwrap(),
        encode_msgpack(&b, &ty).unwrap()
    );
    assert_eq!(encode_json(&a, &ty).unwrap(), encode_json(&b, &ty).unwrap());
    assert_eq!(encode_json(&a, &ty).unwrap(), br#"["a","b","c"]"#);
}

#[test]
fn malformed_msgpack_errors() {
    let ty = gpu_node_type();
    let cases: &[(&str, &Type)] = &[
        ("", &Type::String),
        ("a5 61", &Type::String),
        ("c1", &Type::String),
        ("dd ff ff ff ff", &Type::list(Type::String)),
        ("df ff ff ff ff", &Type::map(Type::String)),
        ("db ff ff ff ff 00", &Type::String),
        ("a2 ff fe", &Type::String),
        ("81 a1 78 c0", &ty),
        ("81 01 c0", &Type::map(Type::String)),
        ("82 a1 61 c0 a1 61 c0", &Type::map(Type::String)),
        ("91 01", &Type::tuple([Type::Number, Type::Number])),
        ("c3", &Type::Number),
        ("a3 61 62 63", &Type::Number),
        ("cb 7f f8 00 00 00 00 00 00", &Type::Number),
        ("c0 c0", &Type::String),
        ("92 c4 01 22 c0", &Type::Dynamic),
        ("c7 ff 0c 81", &Type::String),
        ("c7 03 0c 81 a1 78", &Type::String),
        ("c7 03 0c 91 01 c2", &Type::String),
        ("c7 03 0c 81 05 01", &Type::String),
    ];
    for (b, ty) in cases {
        assert!(decode_msgpack(&hex(b), ty).is_err(), "{b} as {ty}");
    }
    // Oversized refinement payloads are refused.
    let mut big = hex("c8 04 01 0c");
    big.extend(std::iter::repeat_n(0u8, 1025));
    assert!(decode_msgpack(&big, &Type::String).is_err());
    // Deep nesting is capped.
    let mut deep_ty = Type::String;
    for _ in 0..100 {
        deep_ty = Type::list(deep_ty);
    }
    let mut deep = vec![0x91; 100];
    deep.push(0xc0);
    let e = decode_msgpack(&deep, &deep_ty).unwrap_err();
    assert!(e.message.contains("too deeply"), "{e}");
    // Deeply nested dynamic values too.
    let mut nested = Vec::new();
    for _ in 0..200 {
        nested.extend_from_slice(&[0x92, 0xc4, 9]);
        nested.extend_from_slice(b"\"dynamic\"");
    }
    nested.push(0xc0);
    assert!(decode_msgpack(&nested, &Type::Dynamic).is_err());
    // Error paths point at the failure.
    let bad = bytes_of(&[
        &[0x81, 0xa4],
        b"gpus",
        &[0x91, 0x81, 0xa5],
        b"index",
        &[0xa1, b'x'],
    ]);
    let e = decode_msgpack(&bad, &ty).unwrap_err();
    assert_eq!(e.path_string(), ".gpus[0].index");
}

#[test]
fn encode_mismatches() {
    let ty = gpu_node_type();
    let e = encode_msgpack(&Value::object([("name", Value::from(1))]), &ty).unwrap_err();
    assert_eq!(e.to_string(), "at .name: expected string, found number");
    let e = encode_msgpack(&Value::object([("extra", Value::Null)]), &ty).unwrap_err();
    assert!(e.message.contains("unsupported attribute"));
    let e = encode_json(&Value::object([("name", Value::unknown())]), &ty).unwrap_err();
    assert!(e.is_not_known());
    assert_eq!(e.path_string(), ".name");
    assert!(encode_msgpack(&Value::from(f64::NAN), &Type::Number).is_err());
    assert!(encode_json(&Value::from(f64::INFINITY), &Type::Number).is_err());
    assert_eq!(
        encode_msgpack(&Value::from(f64::INFINITY), &Type::Number).unwrap(),
        hex("cb 7f f0 00 00 00 00 00 00")
    );
}

#[test]
fn json_depth_and_sets() {
    let mut deep_ty = Type::Number;
    for _ in 0..100 {
        deep_ty = Type::list(deep_ty);
    }
    let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let e = decode_json(deep.as_bytes(), &deep_ty).unwrap_err();
    assert!(e.message.contains("too deeply"), "{e}");
    let ty = Type::set(Type::Number);
    let v = decode_json(b"[3, 1, 2]", &ty).unwrap();
    assert!(v.semantically_equal(&Value::Set(vec![1.into(), 2.into(), 3.into()])));
    assert!(!v.semantically_equal(&Value::Set(vec![1.into(), 2.into()])));
}

#[test]
fn json_decoding() {
    let ty = Type::object([
        ("n", Type::Number),
        ("big", Type::Number),
        ("f", Type::Number),
        ("s", Type::String),
        ("b", Type::Bool),
        ("m", Type::map(Type::Bool)),
        ("t", Type::tuple([Type::String, Type::Number])),
        ("absent", Type::list(Type::String)),
    ]);
    let j = br#"{"n": 3, "big": 123456789012345678901234567890, "f": 2.5,
        "s": 12, "b": "true", "m": {"x": false}, "t": ["a", "7"]}"#;
    let v = decode_json(j, &ty).unwrap();
    assert_eq!(v.get_attr("n").and_then(Value::as_i64), Some(3));
    assert_eq!(
        v.get_attr("big").unwrap().as_number().unwrap().to_string(),
        "123456789012345678901234567890"
    );
    assert_eq!(v.get_attr("f"), Some(&Value::from(2.5)));
    assert_eq!(v.get_attr("s").and_then(Value::as_str), Some("12"));
    assert_eq!(v.get_attr("b").and_then(Value::as_bool), Some(true));
    assert_eq!(v.get_attr("absent"), Some(&Value::Null));
    assert_eq!(
        v.get_attr("t"),
        Some(&Value::Tuple(vec!["a".into(), 7.into()]))
    );
    let out = String::from_utf8(encode_json(&v, &ty).unwrap()).unwrap();
    assert_eq!(
        out,
        r#"{"absent":null,"b":true,"big":123456789012345678901234567890,"f":2.5,"m":{"x":false},"n":3,"s":"12","t":["a",7]}"#
    );
    for bad in [
        &br#"{"zz": 1}"#[..],
        br#"{"n": 1, "n": 2}"#,
        br#"{"n": [1]}"#,
        b"{",
        br#"{"t": ["a"]}"#,
    ] {
        assert!(
            decode_json(bad, &ty).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[derive(Debug, Deserialize, Serialize, PartialEq)]
struct Gpu {
    index: u32,
    model: String,
}

#[derive(Debug, Deserialize, Serialize, PartialEq)]
struct Spec {
    gpu_count: u8,
    name: Option<String>,
    gpus: Vec<Gpu>,
    labels: BTreeMap<String, String>,
    ratio: f64,
}

#[derive(Debug, Deserialize, Serialize, PartialEq)]
struct Node {
    spec: Spec,
}

fn node_type() -> Type {
    Type::object([(
        "spec",
        Type::object([
            ("gpu_count", Type::Number),
            ("name", Type::String),
            (
                "gpus",
                Type::list(Type::object([
                    ("index", Type::Number),
                    ("model", Type::String),
                ])),
            ),
            ("labels", Type::map(Type::String)),
            ("ratio", Type::Number),
            ("unused", Type::Bool),
        ]),
    )])
}

fn node_value(gpu_count: Value, name: Value) -> Value {
    Value::object([(
        "spec",
        Value::object([
            ("gpu_count", gpu_count),
            ("name", name),
            (
                "gpus",
                Value::List(vec![Value::object([
                    ("index", Value::from(0)),
                    ("model", Value::string("h100")),
                ])]),
            ),
            ("labels", Value::map([("team", Value::string("ml"))])),
            ("ratio", Value::from(0.5)),
            ("unused", Value::Null),
        ]),
    )])
}

#[test]
fn serde_from_value() {
    let n: Node = from_value(&node_value(Value::from(2), Value::Null)).unwrap();
    assert_eq!(n.spec.gpu_count, 2);
    assert_eq!(n.spec.name, None);
    assert_eq!(n.spec.gpus[0].model, "h100");
    assert_eq!(n.spec.labels["team"], "ml");

    let e = from_value::<Node>(&node_value(Value::string("2"), Value::Null)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "at .spec.gpu_count: expected number, found string"
    );
    let e = from_value::<Node>(&node_value(Value::from(300), Value::Null)).unwrap_err();
    assert_eq!(e.path_string(), ".spec.gpu_count");
    assert!(e.message.contains("out of range"), "{e}");
    let e = from_value::<Node>(&node_value(Value::from(1.5), Value::Null)).unwrap_err();
    assert!(e.message.contains("whole number"), "{e}");
    let e = from_value::<Node>(&node_value(Value::from(1), Value::unknown())).unwrap_err();
    assert!(e.is_not_known());
    assert_eq!(e.to_string(), "at .spec.name: value is not known yet");
    // A missing required field is reported at its object.
    let e = from_value::<Gpu>(&Value::object([("index", Value::from(1))])).unwrap_err();
    assert!(e.message.contains("model"), "{e}");
    // Null for a required field.
    let e = from_value::<Gpu>(&Value::object([
        ("index", Value::from(1)),
        ("model", Value::Null),
    ]))
    .unwrap_err();
    assert_eq!(e.to_string(), "at .model: expected string, found null");
    // Dynamic wrappers are transparent; serde_json::Value works.
    let j: serde_json::Value =
        from_value(&Value::Dynamic(Type::String, Box::new(Value::string("x")))).unwrap();
    assert_eq!(j, serde_json::json!("x"));
    let big: u64 = from_value(&Value::Number(u64::MAX.into())).unwrap();
    assert_eq!(big, u64::MAX);
    let wide: i128 = from_value(&Value::Number("1e30".parse().unwrap())).unwrap();
    assert_eq!(wide, 10i128.pow(30));
    let set: std::collections::BTreeSet<String> =
        from_value(&Value::Set(vec!["b".into(), "a".into()])).unwrap();
    assert_eq!(set.len(), 2);
}

#[derive(Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Shared,
    Exclusive,
}

#[test]
fn serde_to_value() {
    let node = Node {
        spec: Spec {
            gpu_count: 2,
            name: None,
            gpus: vec![Gpu {
                index: 0,
                model: "h100".into(),
            }],
            labels: [("team".to_string(), "ml".to_string())].into(),
            ratio: 0.5,
        },
    };
    let ty = node_type();
    let v = to_value(&node, &ty).unwrap();
    assert_eq!(v, node_value(Value::from(2), Value::Null));
    let back: Node =
        from_value(&decode_msgpack(&encode_msgpack(&v, &ty).unwrap(), &ty).unwrap()).unwrap();
    assert_eq!(back, node);

    // Type mismatch names the path.
    let wrong = Type::object([("spec", Type::object([("gpu_count", Type::String)]))]);
    let e = to_value(&node, &wrong).unwrap_err();
    assert_eq!(
        e.to_string(),
        "at .spec.gpu_count: expected string, found number"
    );
    #[derive(Serialize)]
    struct Extra {
        a: u8,
        b: u8,
    }
    let e = to_value(&Extra { a: 1, b: 2 }, &Type::object([("a", Type::Number)])).unwrap_err();
    assert!(e.message.contains("unsupported attribute \"b\""), "{e}");

    // Enums as strings, sets, tuples, dynamic.
    assert_eq!(
        to_value(&Mode::Exclusive, &Type::String).unwrap(),
        Value::string("exclusive")
    );
    assert_eq!(
        from_value::<Mode>(&Value::string("shared")).unwrap(),
        Mode::Shared
    );
    assert_eq!(
        to_value(&vec![1, 2], &Type::set(Type::Number)).unwrap(),
        Value::Set(vec![1.into(), 2.into()])
    );
    assert_eq!(
        to_value(&("a", 1), &Type::tuple([Type::String, Type::Number])).unwrap(),
        Value::Tuple(vec!["a".into(), 1.into()])
    );
    assert!(to_value(&("a", 1, 2), &Type::tuple([Type::String, Type::Number])).is_err());
    let d = to_value(&serde_json::json!({"k": [1, "x"]}), &Type::Dynamic).unwrap();
    assert_eq!(
        d,
        Value::Dynamic(
            Type::object([("k", Type::tuple([Type::Number, Type::String]))]),
            Box::new(Value::object([(
                "k",
                Value::Tuple(vec![1.into(), "x".into()])
            )]))
        )
    );
    let bytes = encode_msgpack(&d, &Type::Dynamic).unwrap();
    assert_eq!(decode_msgpack(&bytes, &Type::Dynamic).unwrap(), d);
    assert_eq!(to_value(&None::<u8>, &Type::Dynamic).unwrap(), Value::Null);
    assert!(to_value(&f64::NAN, &Type::Number).is_err());
}
