//! Fuzzes the JSON value decoder against fixed schema types (including
//! `dynamic`); decoded values must re-encode stably.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    tfplugin::value::fuzz_decode_json(data);
});
