//! Scalar big-number helpers for the batch signer: conversions between bytes, 64-bit and 52-bit
//! limbs, the per-key constants, and the CRT recombination. Key constants are computed once per
//! key; everything here runs the same instructions whatever the (secret) values.
//!
//! Every number here is a newtype that is wiped when dropped and is neither `Copy` nor `Clone`:
//! a copy of a secret is made only where the code says so, and dies wiped.

use zeroize::{Zeroize, ZeroizeOnDrop};

/// Limbs per number: 20 × 52 bits = 1,040 bits.
pub const LIMBS: usize = 20;
/// Bits per limb.
pub const LIMB_BITS: u32 = 52;
pub const LIMB_MASK: u64 = (1 << LIMB_BITS) - 1;

/// A 1,024-bit number as 64-bit limbs, least significant first.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct U1024(pub [u64; 16]);

/// A 1,040-bit number as 52-bit limbs, least significant first.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct L52(pub [u64; LIMBS]);

impl U1024 {
    pub fn zero() -> U1024 {
        U1024([0; 16])
    }

    pub fn one() -> U1024 {
        let mut one = U1024::zero();
        one.0[0] = 1;
        one
    }

    /// A copy, wiped when dropped like the original.
    pub fn duplicate(&self) -> U1024 {
        U1024(self.0)
    }
}

impl L52 {
    pub fn zero() -> L52 {
        L52([0; LIMBS])
    }

    pub fn one() -> L52 {
        let mut one = L52::zero();
        one.0[0] = 1;
        one
    }
}

/// Big-endian bytes (at most 128) as a 1,024-bit number; `None` if longer.
pub fn u1024_from_be(bytes: &[u8]) -> Option<U1024> {
    if bytes.len() > 128 {
        return None;
    }
    let mut out = U1024::zero();
    for (i, b) in bytes.iter().rev().enumerate() {
        out.0[i / 8] |= u64::from(*b) << (8 * (i % 8));
    }
    Some(out)
}

/// Bits `[52·j, 52·j + 52)` of a little-endian 64-bit-limb number, for `j` in `first..first + LIMBS`.
fn to_52(x: &[u64], first: usize) -> L52 {
    let mut out = L52::zero();
    for (k, o) in out.0.iter_mut().enumerate() {
        let bit = (first + k) * LIMB_BITS as usize;
        let (i, s) = (bit / 64, bit % 64);
        let lo = x.get(i).map_or(0, |v| v >> s);
        let hi = if s > 12 { x.get(i + 1).map_or(0, |v| v << (64 - s)) } else { 0 };
        *o = (lo | hi) & LIMB_MASK;
    }
    out
}

pub fn l52(x: &U1024) -> L52 {
    to_52(&x.0, 0)
}

/// A 2,048-bit big-endian value split at bit 1,040: (low, high) in 52-bit limbs.
pub fn split_2048(bytes: &[u8; 256]) -> (L52, L52) {
    let mut x = [0u64; 32];
    for (i, b) in bytes.iter().rev().enumerate() {
        x[i / 8] |= u64::from(*b) << (8 * (i % 8));
    }
    let out = (to_52(&x, 0), to_52(&x, LIMBS));
    x.zeroize();
    out
}

/// 52-bit limbs back to 64-bit ones (the value must be below 2^1024).
pub fn from_52(x: &L52) -> U1024 {
    let mut out = U1024::zero();
    for (j, limb) in x.0.iter().enumerate() {
        let bit = j * LIMB_BITS as usize;
        let (i, s) = (bit / 64, bit % 64);
        out.0[i] |= limb << s;
        if s > 12 && i + 1 < 16 {
            out.0[i + 1] |= limb >> (64 - s);
        }
    }
    out
}

/// x ← 2x mod n for x < n: doubled, then n taken off where that does not borrow (by mask).
fn double_mod(x: &mut U1024, n: &U1024) {
    let mut d = U1024::zero();
    let mut carry = 0u64;
    for (d, x) in d.0.iter_mut().zip(x.0.iter()) {
        *d = (x << 1) | carry;
        carry = x >> 63;
    }
    let mut s = U1024::zero();
    let mut borrow = 0u64;
    for ((s, d), n) in s.0.iter_mut().zip(&d.0).zip(&n.0) {
        let (t, b1) = d.overflowing_sub(*n);
        let (t, b2) = t.overflowing_sub(borrow);
        *s = t;
        borrow = u64::from(b1 | b2);
    }
    // 2x ≥ n when it carried out of 1,024 bits or the subtraction did not borrow.
    let mut take = (carry | (borrow ^ 1)).wrapping_neg();
    for ((x, s), d) in x.0.iter_mut().zip(&s.0).zip(&d.0) {
        *x = (s & take) | (d & !take);
    }
    for bit in [&mut take, &mut carry, &mut borrow] {
        bit.zeroize();
    }
}

/// x·2^k mod n for x < n.
pub fn shl_mod(x: &U1024, k: usize, n: &U1024) -> U1024 {
    let mut v = x.duplicate();
    for _ in 0..k {
        double_mod(&mut v, n);
    }
    v
}

/// a − b − 1 for b ≤ a − 1 (the blinding's exponent p − 1 − e); wraps below that, which the
/// key's self-test would catch.
pub fn sub_minus_one(a: &U1024, b: &U1024) -> U1024 {
    let mut out = U1024::zero();
    let mut borrow = 1u64;
    for ((o, a), b) in out.0.iter_mut().zip(&a.0).zip(&b.0) {
        let (t, b1) = a.overflowing_sub(*b);
        let (t, b2) = t.overflowing_sub(borrow);
        *o = t;
        borrow = u64::from(b1 | b2);
    }
    borrow.zeroize();
    out
}

/// -n⁻¹ mod 2^52 for odd n (Newton's iteration doubles the correct bits each round).
pub fn neg_inv_52(n0: u64) -> u64 {
    let mut inv: u64 = 1;
    for _ in 0..6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(n0.wrapping_mul(inv)));
    }
    let out = inv.wrapping_neg() & LIMB_MASK;
    inv.zeroize();
    out
}

/// a + 2p − b in 52-bit limbs, for a < p and b < 2p (so the result is positive, below 3p).
pub fn sub_plus_2p(a: &L52, b: &L52, p: &L52) -> L52 {
    let mut out = L52::zero();
    let mut carry: i64 = 0;
    for j in 0..LIMBS {
        let v = a.0[j] as i64 + 2 * p.0[j] as i64 - b.0[j] as i64 + carry;
        carry = v >> LIMB_BITS;
        out.0[j] = (v as u64) & LIMB_MASK;
    }
    carry.zeroize();
    out
}

/// s_q + q·h as 256 big-endian bytes (the CRT recombination; below n = p·q).
pub fn recombine(sq: &U1024, q: &U1024, h: &U1024) -> [u8; 256] {
    let mut acc = [0u64; 33];
    for (i, hi) in h.0.iter().enumerate() {
        let mut carry = 0u128;
        for (j, qj) in q.0.iter().enumerate() {
            let t = u128::from(*hi) * u128::from(*qj) + u128::from(acc[i + j]) + carry;
            acc[i + j] = t as u64;
            carry = t >> 64;
        }
        acc[i + 16] = carry as u64;
    }
    let mut carry = 0u128;
    for (i, a) in acc.iter_mut().enumerate() {
        let t = u128::from(*a) + u128::from(sq.0.get(i).copied().unwrap_or(0)) + carry;
        *a = t as u64;
        carry = t >> 64;
    }
    let mut out = [0u8; 256];
    for (i, b) in out.iter_mut().rev().enumerate() {
        *b = (acc[i / 8] >> (8 * (i % 8))) as u8;
    }
    // The partial sums hold multiples of q; the result is the signature, public once checked
    // (the caller wipes it when the check fails).
    acc.zeroize();
    carry.zeroize();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limb_conversions_round_trip() {
        let mut x = U1024::zero();
        for (i, v) in x.0.iter_mut().enumerate() {
            *v = 0x0123_4567_89ab_cdefu64.rotate_left(i as u32 * 7);
        }
        assert_eq!(from_52(&l52(&x)).0, x.0);
        assert!(l52(&x).0.iter().all(|l| *l <= LIMB_MASK));
    }

    #[test]
    fn negative_inverse_is_an_inverse() {
        for n0 in [1u64, 3, 0xffff_ffff_ffff_ffff, 0x1234_5678_9abc_def1] {
            assert_eq!(n0.wrapping_mul(neg_inv_52(n0)).wrapping_add(1) & LIMB_MASK, 0);
        }
    }

    #[test]
    fn subtraction_with_one_more_borrow() {
        let a = u1024_from_be(&[1, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
        let b = u1024_from_be(&[1, 0, 1]).unwrap();
        // 2^64 − 65537 − 1
        let d = sub_minus_one(&a, &b);
        assert_eq!(d.0[0], 0u64.wrapping_sub(65538));
        assert!(d.0[1..].iter().all(|l| *l == 0));
    }
}
