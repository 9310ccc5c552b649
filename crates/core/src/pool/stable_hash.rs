//! A hash that is the same on every build and platform (unlike `DefaultHasher`), for
//! names and idempotency tokens that plan, apply and retries must derive alike.

/// 64-bit FNV-1a of `s`.
pub(crate) fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
