//! Byte sizes and durations as scenario files write them: "512M", "4G", "1.5G" / "100ms", "2s".

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A size in bytes. Written as an integer (bytes) or a string with a binary suffix
/// K, M, G, T (1K = 1024), e.g. "512M", "1.5G".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

impl Bytes {
    /// For `skip_serializing_if`: a zero size that need not be written.
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }
}

/// Parses "512M" style sizes.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'B' => 1,
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return Err(format!("invalid size {s:?}: the suffix must be one of K, M, G, T")),
            };
            (&t[..t.len() - 1], m)
        }
        _ => (t, 1),
    };
    let num = num.trim();
    if let Ok(v) = num.parse::<u64>() {
        return v.checked_mul(mult).ok_or_else(|| format!("size {s:?} is too large"));
    }
    match num.parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => {
            let b = v * mult as f64;
            if b.fract() != 0.0 {
                return Err(format!("invalid size {s:?}: not a whole number of bytes"));
            }
            Ok(b as u64)
        }
        _ => Err(format!("invalid size {s:?}: expected a number of bytes or a number with K, M, G or T")),
    }
}

/// Formats bytes with the largest exact binary suffix.
pub fn format_bytes(b: u64) -> String {
    for (suffix, m) in [("T", 1u64 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        if b >= m && b % m == 0 {
            return format!("{}{}", b / m, suffix);
        }
    }
    b.to_string()
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_bytes(self.0))
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size: an integer number of bytes or a string such as \"512M\" or \"4G\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Bytes, E> {
                u64::try_from(v).map(Bytes).map_err(|_| E::custom("a size cannot be negative"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bytes, E> {
                parse_bytes(v).map(Bytes).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A simulated duration in nanoseconds, written "250ms", "2s", "1.5s", "500us", "100ns" or as an
/// integer number of nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub u64);

/// Parses "250ms" style durations into nanoseconds.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = (&t[..split], &t[split..]);
    let mult: u64 = match unit {
        "ns" | "" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        _ => return Err(format!("invalid duration {s:?}: the unit must be one of ns, us, ms, s, min")),
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("invalid duration {s:?}: expected a number followed by ns, us, ms, s or min"))?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(format!("invalid duration {s:?}: must be a non-negative number"));
    }
    Ok((v * mult as f64).round() as u64)
}

/// Formats nanoseconds with the largest exact unit.
pub fn format_duration(ns: u64) -> String {
    for (u, m) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= m && ns % m == 0 {
            return format!("{}{}", ns / m, u);
        }
    }
    format!("{ns}ns")
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(self.0))
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"250ms\" or \"2s\" (or an integer number of ns)")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
                Ok(Duration(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
                u64::try_from(v).map(Duration).map_err(|_| E::custom("a duration cannot be negative"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
                parse_duration(v).map(Duration).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_parse_and_format() {
        assert_eq!(parse_bytes("512M").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert!(parse_bytes("12Q").is_err());
        assert!(parse_bytes("1.0000001K").is_err());
        assert_eq!(format_bytes(4 << 30), "4G");
        assert_eq!(format_bytes(4097), "4097");
        assert_eq!(parse_duration("250ms").unwrap(), 250_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert!(parse_duration("3 weeks").is_err());
        assert_eq!(format_duration(2_000_000_000), "2s");
    }
}
