//! The vector arithmetic: Montgomery multiplication of four independent 1,040-bit numbers at once,
//! one per 64-bit lane of an AVX-512 (VL) register, with the 52-bit multiply-add instructions of
//! AVX-512 IFMA. A number is 20 registers, limb `j` of every lane in register `j` ("vertical"
//! layout), so carries never cross lanes and each lane may have its own modulus and exponent.
//!
//! Montgomery multiplication here is "almost Montgomery" with R = 2^1040 and moduli below 2^1024:
//! for inputs whose product is below R·N the result is below 2N, so no final subtraction is needed
//! between steps and nothing branches on data. Every function runs the same instructions whatever
//! the values: the only secret-dependent choice, the exponent window, selects a table entry with
//! masks after reading every entry.
//!
//! Wiping: every vector number here is a [`Vec4`] and every packed per-lane constant a [`Lanes`],
//! both wiped when dropped and neither `Copy` nor `Clone`. What no Rust code can wipe is what
//! lives only in registers (the accumulators of a multiplication) or in copies the compiler makes
//! on its own; the accumulators are kept in registers on purpose (see [`end_step`]).

use std::arch::x86_64::*;

use zeroize::{Zeroize, ZeroizeOnDrop};

use super::num::{L52, LIMB_MASK, LIMBS, U1024};

/// Exponent window: 32 table entries, 5 squarings per multiplication.
const WINDOW: usize = 5;

/// Four numbers, limb `j` of lane `l` in `self.0[j]` lane `l`; limbs are below 2^52.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct Vec4(pub [__m256i; LIMBS]);

impl Vec4 {
    pub fn zero() -> Vec4 {
        // SAFETY: all-zero bits are a valid `__m256i` (no instruction runs here).
        Vec4(unsafe { std::mem::zeroed() })
    }
}

/// One 64-bit value per lane (the keys' `k0`, the exponents' windows).
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct Lanes(pub __m256i);

/// One lane's part of a batch: its modulus and constants, and its exponent.
pub struct LaneKey<'a> {
    /// The modulus, 52-bit limbs.
    pub n: &'a L52,
    /// -n⁻¹ mod 2^52.
    pub k0: &'a u64,
    /// R² mod n and R³ mod n, 52-bit limbs.
    pub rr: &'a L52,
    pub rrr: &'a L52,
    /// The exponent, 64-bit limbs, least significant first.
    pub exp: &'a U1024,
}

/// Base blinding, per lane: `a` = r^e·R mod n and `ai` = r⁻¹·R mod n (Montgomery form, below n)
/// for a random r of that lane's modulus and the key's public exponent e (see `super::blinding`).
pub struct Blinding {
    pub a: Vec4,
    pub ai: Vec4,
}

/// Adds one row of partial products into the accumulators named from `$lo`: for each limb `j`,
/// `t[j] += lo52(a·b[j]) + lo52(m·n[j])` and `t[j+1] += hi52(a·b[j]) + hi52(m·n[j])`.
macro_rules! row {
    ($a:ident, $m:ident, $b:ident, $n:ident, $j:expr; $lo:ident $hi:ident $($rest:ident)*) => {
        $lo = _mm256_madd52lo_epu64($lo, $a, $b[$j]);
        $lo = _mm256_madd52lo_epu64($lo, $m, $n[$j]);
        $hi = _mm256_madd52hi_epu64($hi, $a, $b[$j]);
        $hi = _mm256_madd52hi_epu64($hi, $m, $n[$j]);
        row!($a, $m, $b, $n, $j + 1; $hi $($rest)*);
    };
    ($a:ident, $m:ident, $b:ident, $n:ident, $j:expr; $last:ident) => {};
}

/// One word of the multiplier: accumulate `a_i·b + m·n`, where `m` makes the lowest accumulator
/// divisible by 2^52, then [`end_step`]. The accumulators are named in their rotated order, so
/// dropping the lowest is a renaming and all 21 stay in registers.
macro_rules! step {
    ($ai:expr, $b:ident, $n:ident, $k0:ident, $zero:ident; $t0:ident $t1:ident $($t:ident)*) => {{
        let a = $ai;
        let m = _mm256_madd52lo_epu64($zero, _mm256_madd52lo_epu64($t0, a, $b[0]), $k0);
        row!(a, m, $b, $n, 0; $t0 $t1 $($t)*);
        end_step!($zero; $t0 $t1 $($t)*);
    }};
}

/// The end of a step: the lowest accumulator, now divisible by 2^52, is dropped (it becomes the
/// new top, zero) and its high bits carried into the next; then an empty instruction that "uses
/// and changes" every accumulator keeps the compiler from interleaving the steps, which would need
/// more than the 32 registers and spill (measurably slower without it).
macro_rules! end_step {
    ($zero:ident; $t0:ident $t1:ident $($t:ident)*) => {
        let c = _mm256_srli_epi64($t0, 52);
        $t0 = $zero;
        $t1 = _mm256_add_epi64($t1, c);
        // SAFETY: the template is empty (a comment); it reads and writes only these registers.
        unsafe {
            std::arch::asm!("/* {0:y} {1:y} {2:y} {3:y} {4:y} {5:y} {6:y} {7:y} {8:y} {9:y} {10:y} {11:y} {12:y} {13:y} {14:y} {15:y} {16:y} {17:y} {18:y} {19:y} {20:y} */",
                inout(zmm_reg) $t0, inout(zmm_reg) $t1, $(inout(zmm_reg) $t,)* options(nomem, nostack, preserves_flags));
        }
    };
}

/// Adds the reduction row alone: `t[j] += lo52(m·n[j])`, `t[j+1] += hi52(m·n[j])`.
macro_rules! reduce_row {
    ($m:ident, $n:ident, $j:expr; $lo:ident $hi:ident $($rest:ident)*) => {
        $lo = _mm256_madd52lo_epu64($lo, $m, $n[$j]);
        $hi = _mm256_madd52hi_epu64($hi, $m, $n[$j]);
        reduce_row!($m, $n, $j + 1; $hi $($rest)*);
    };
    ($m:ident, $n:ident, $j:expr; $last:ident) => {};
}

/// The cross products of a squaring's row `i`, each made once and added twice (shifted left by
/// one): to the accumulators from position i+1 on, `2·(hi52(a_i·a_{k−1}) + lo52(a_i·a_k))`.
macro_rules! cross {
    (@first $ai:ident, $a:ident, $zero:ident, $j:expr; $t:ident $($rest:ident)*) => {
        $t = _mm256_add_epi64($t, _mm256_slli_epi64(_mm256_madd52lo_epu64($zero, $ai, $a[$j]), 1));
        cross!(@next $ai, $a, $zero, $j; $($rest)*);
    };
    (@next $ai:ident, $a:ident, $zero:ident, $j:expr; $t:ident $($rest:ident)+) => {
        let x = _mm256_madd52lo_epu64(_mm256_madd52hi_epu64($zero, $ai, $a[$j]), $ai, $a[$j + 1]);
        $t = _mm256_add_epi64($t, _mm256_slli_epi64(x, 1));
        cross!(@next $ai, $a, $zero, $j + 1; $($rest)+);
    };
    (@next $ai:ident, $a:ident, $zero:ident, $j:expr; $t:ident) => {
        $t = _mm256_add_epi64($t, _mm256_slli_epi64(_mm256_madd52hi_epu64($zero, $ai, $a[$j]), 1));
    };
    // The last row has no cross products.
    (@first $ai:ident, $a:ident, $zero:ident, $j:expr;) => {};
}

/// One word of a squaring: row `i` of a·a counting each cross product once (a_i·a_j for j > i,
/// doubled; a_j·a_i for j < i came in row j), then the reduction as in [`step`]. `$t…` are the
/// accumulators in rotated order, `$d0 $d1` the two that take a_i² (positions i and i+1), and
/// `$c…` those from position i+1 on, which take the cross products.
macro_rules! sqr_step {
    ($a:ident, $i:expr, $n:ident, $k0:ident, $zero:ident; $t0:ident $t1:ident $($t:ident)*; $d0:ident $d1:ident; $($c:ident)*) => {{
        let ai = $a[$i];
        $d0 = _mm256_madd52lo_epu64($d0, ai, ai);
        $d1 = _mm256_madd52hi_epu64($d1, ai, ai);
        cross!(@first ai, $a, $zero, $i + 1; $($c)*);
        let m = _mm256_madd52lo_epu64($zero, $t0, $k0);
        reduce_row!(m, $n, 0; $t0 $t1 $($t)*);
        end_step!($zero; $t0 $t1 $($t)*);
    }};
}

/// a·b·R⁻¹ mod n in each lane, as a number below 2n when a·b < R·n (R = 2^1040).
// The last step's fence "changes" the zeroed top accumulator, which nothing reads after it.
#[allow(unused_assignments)]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
pub fn mont_mul(a: &Vec4, b: &Vec4, n: &Vec4, k0: &Lanes) -> Vec4 {
    let (a, b, n, k0) = (&a.0, &b.0, &n.0, k0.0);
    let zero = _mm256_setzero_si256();
    let (mut t0, mut t1, mut t2, mut t3, mut t4, mut t5, mut t6) = (zero, zero, zero, zero, zero, zero, zero);
    let (mut t7, mut t8, mut t9, mut t10, mut t11, mut t12, mut t13) = (zero, zero, zero, zero, zero, zero, zero);
    let (mut t14, mut t15, mut t16, mut t17, mut t18, mut t19, mut t20) = (zero, zero, zero, zero, zero, zero, zero);
    step!(a[0], b, n, k0, zero; t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20);
    step!(a[1], b, n, k0, zero; t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0);
    step!(a[2], b, n, k0, zero; t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1);
    step!(a[3], b, n, k0, zero; t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2);
    step!(a[4], b, n, k0, zero; t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3);
    step!(a[5], b, n, k0, zero; t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4);
    step!(a[6], b, n, k0, zero; t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5);
    step!(a[7], b, n, k0, zero; t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6);
    step!(a[8], b, n, k0, zero; t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7);
    step!(a[9], b, n, k0, zero; t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8);
    step!(a[10], b, n, k0, zero; t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9);
    step!(a[11], b, n, k0, zero; t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10);
    step!(a[12], b, n, k0, zero; t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11);
    step!(a[13], b, n, k0, zero; t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12);
    step!(a[14], b, n, k0, zero; t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13);
    step!(a[15], b, n, k0, zero; t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14);
    step!(a[16], b, n, k0, zero; t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15);
    step!(a[17], b, n, k0, zero; t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16);
    step!(a[18], b, n, k0, zero; t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17);
    step!(a[19], b, n, k0, zero; t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18);
    // After twenty steps the accumulators, least significant first, are t20, t0, …, t18 (t19 is
    // the zeroed top). Each holds a sum of a few dozen 52-bit values: carry them into 52-bit limbs.
    normalise(Vec4([t20, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17, t18]))
}

/// a·a·R⁻¹ mod n in each lane, as [`mont_mul`] with the same bounds, with 420 multiplications
/// of the product part instead of 800 (the cross products a_i·a_j = a_j·a_i are made once).
#[allow(unused_assignments)]
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
pub fn mont_sqr(a: &Vec4, n: &Vec4, k0: &Lanes) -> Vec4 {
    let (a, n, k0) = (&a.0, &n.0, k0.0);
    let zero = _mm256_setzero_si256();
    let (mut t0, mut t1, mut t2, mut t3, mut t4, mut t5, mut t6) = (zero, zero, zero, zero, zero, zero, zero);
    let (mut t7, mut t8, mut t9, mut t10, mut t11, mut t12, mut t13) = (zero, zero, zero, zero, zero, zero, zero);
    let (mut t14, mut t15, mut t16, mut t17, mut t18, mut t19, mut t20) = (zero, zero, zero, zero, zero, zero, zero);
    sqr_step!(a, 0, n, k0, zero; t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20; t0 t1; t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20);
    sqr_step!(a, 1, n, k0, zero; t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0; t2 t3; t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0);
    sqr_step!(a, 2, n, k0, zero; t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1; t4 t5; t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1);
    sqr_step!(a, 3, n, k0, zero; t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2; t6 t7; t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2);
    sqr_step!(a, 4, n, k0, zero; t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3; t8 t9; t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3);
    sqr_step!(a, 5, n, k0, zero; t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4; t10 t11; t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4);
    sqr_step!(a, 6, n, k0, zero; t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5; t12 t13; t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5);
    sqr_step!(a, 7, n, k0, zero; t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6; t14 t15; t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6);
    sqr_step!(a, 8, n, k0, zero; t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7; t16 t17; t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7);
    sqr_step!(a, 9, n, k0, zero; t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8; t18 t19; t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8);
    sqr_step!(a, 10, n, k0, zero; t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9; t20 t0; t0 t1 t2 t3 t4 t5 t6 t7 t8 t9);
    sqr_step!(a, 11, n, k0, zero; t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10; t1 t2; t2 t3 t4 t5 t6 t7 t8 t9 t10);
    sqr_step!(a, 12, n, k0, zero; t12 t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11; t3 t4; t4 t5 t6 t7 t8 t9 t10 t11);
    sqr_step!(a, 13, n, k0, zero; t13 t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12; t5 t6; t6 t7 t8 t9 t10 t11 t12);
    sqr_step!(a, 14, n, k0, zero; t14 t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13; t7 t8; t8 t9 t10 t11 t12 t13);
    sqr_step!(a, 15, n, k0, zero; t15 t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14; t9 t10; t10 t11 t12 t13 t14);
    sqr_step!(a, 16, n, k0, zero; t16 t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15; t11 t12; t12 t13 t14 t15);
    sqr_step!(a, 17, n, k0, zero; t17 t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16; t13 t14; t14 t15 t16);
    sqr_step!(a, 18, n, k0, zero; t18 t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17; t15 t16; t16 t17);
    sqr_step!(a, 19, n, k0, zero; t19 t20 t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18; t17 t18; );
    normalise(Vec4([t20, t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17, t18]))
}

/// Carries every limb's bits above 52 into the next limb, in place; the top limb keeps its
/// overflow (the callers' bounds keep values below 2^1040).
#[target_feature(enable = "avx512f,avx512vl")]
fn normalise(mut t: Vec4) -> Vec4 {
    let mask = _mm256_set1_epi64x(LIMB_MASK as i64);
    let mut carry = _mm256_setzero_si256();
    for o in t.0.iter_mut() {
        let v = _mm256_add_epi64(*o, carry);
        carry = _mm256_srli_epi64(v, 52);
        *o = _mm256_and_si256(v, mask);
    }
    t.0[LIMBS - 1] = _mm256_add_epi64(t.0[LIMBS - 1], _mm256_slli_epi64(carry, 52));
    t
}

/// a + b, limb by limb, then normalised.
#[target_feature(enable = "avx512f,avx512vl")]
pub fn add(a: &Vec4, b: &Vec4) -> Vec4 {
    let mut t = Vec4(a.0);
    for (t, b) in t.0.iter_mut().zip(&b.0) {
        *t = _mm256_add_epi64(*t, *b);
    }
    normalise(t)
}

/// a mod n for a < 2n: a − n where that does not borrow, else a, chosen with a mask.
#[target_feature(enable = "avx512f,avx512vl")]
pub fn reduce_once(a: &Vec4, n: &Vec4) -> Vec4 {
    let mask = _mm256_set1_epi64x(LIMB_MASK as i64);
    let mut d = Vec4(a.0);
    let mut borrow = _mm256_setzero_si256();
    for ((d, a), n) in d.0.iter_mut().zip(&a.0).zip(&n.0) {
        let v = _mm256_sub_epi64(_mm256_sub_epi64(*a, *n), borrow);
        borrow = _mm256_srli_epi64(v, 63);
        *d = _mm256_and_si256(v, mask);
    }
    let keep_a = _mm256_cmpneq_epi64_mask(borrow, _mm256_setzero_si256());
    for (o, a) in d.0.iter_mut().zip(&a.0) {
        *o = _mm256_mask_mov_epi64(*o, keep_a, *a);
    }
    d
}

/// The table entry each lane's `window` names, reading every entry.
#[target_feature(enable = "avx512f,avx512vl")]
fn select(table: &[Vec4; 1 << WINDOW], window: &Lanes) -> Vec4 {
    let mut out = Vec4::zero();
    for (k, entry) in table.iter().enumerate() {
        let hit = _mm256_cmpeq_epi64_mask(window.0, _mm256_set1_epi64x(k as i64));
        for (o, e) in out.0.iter_mut().zip(&entry.0) {
            *o = _mm256_mask_mov_epi64(*o, hit, *e);
        }
    }
    out
}

/// Packs one value per lane.
#[target_feature(enable = "avx512f,avx512vl")]
pub fn lanes(v: [u64; 4]) -> Lanes {
    Lanes(_mm256_setr_epi64x(v[0] as i64, v[1] as i64, v[2] as i64, v[3] as i64))
}

/// Packs four numbers given as 52-bit limbs.
#[target_feature(enable = "avx512f,avx512vl")]
pub fn pack(v: [&L52; 4]) -> Vec4 {
    let mut out = Vec4::zero();
    for (j, o) in out.0.iter_mut().enumerate() {
        *o = _mm256_setr_epi64x(v[0].0[j] as i64, v[1].0[j] as i64, v[2].0[j] as i64, v[3].0[j] as i64);
    }
    out
}

/// Unpacks four numbers into 52-bit limbs.
#[target_feature(enable = "avx512f,avx512vl")]
pub fn unpack(v: &Vec4) -> [L52; 4] {
    let mut out = [L52::zero(), L52::zero(), L52::zero(), L52::zero()];
    let mut l = [0u64; 4];
    for (j, limb) in v.0.iter().enumerate() {
        // SAFETY: `l` is 32 writable bytes; an unaligned store is allowed.
        unsafe { _mm256_storeu_si256(l.as_mut_ptr().cast(), *limb) };
        for (o, x) in out.iter_mut().zip(l) {
            o.0[j] = x;
        }
    }
    l.zeroize();
    out
}

/// The exponent's bits `[pos, pos + width)` (positions are public; the bits are not).
fn window_bits(e: &U1024, pos: usize, width: usize) -> u64 {
    let e = &e.0;
    let (i, s) = (pos / 64, pos % 64);
    let mut v = e[i] >> s;
    if s + width > 64 && i + 1 < e.len() {
        v |= e[i + 1] << (64 - s);
    }
    v & ((1 << width) - 1)
}

/// x^exp mod n in each lane, fully reduced, for x given as its low and high 1,040 bits (x below
/// 2^2048: each lane's RSA modulus, or random bits). With `blind`, the base is x·r^e and the
/// result is multiplied by r⁻¹: for an RSA CRT half (exp = d mod (p − 1), e·exp ≡ 1) that is
/// (x·r^e)^exp·r⁻¹ = x^exp·r·r⁻¹ = x^exp, the same value, from a random-looking base.
#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
pub fn mod_exp(x_lo: &Vec4, x_hi: &Vec4, keys: [&LaneKey<'_>; 4], blind: Option<&Blinding>) -> Vec4 {
    let n = pack(keys.map(|k| k.n));
    let k0 = lanes(keys.map(|k| *k.k0));
    let rr = pack(keys.map(|k| k.rr));
    let rrr = pack(keys.map(|k| k.rrr));
    let one = L52::one();
    let one = pack([&one, &one, &one, &one]);
    // x·R mod n = lo·R + hi·R² = MM(lo, R²) + MM(hi, R³): below 4n, which MM accepts (4n·4n < R·n).
    let mut x = add(&mont_mul(x_lo, &rr, &n, &k0), &mont_mul(x_hi, &rrr, &n, &k0));
    if let Some(b) = blind {
        // x·r^e·R: below 2n (4n·n < R·n).
        x = mont_mul(&x, &b.a, &n, &k0);
    }
    let mut table: [Vec4; 1 << WINDOW] = std::array::from_fn(|_| Vec4::zero());
    table[0] = mont_mul(&rr, &one, &n, &k0);
    table[1] = x;
    for k in 2..table.len() {
        table[k] = mont_mul(&table[k - 1], &table[1], &n, &k0);
    }
    // 1,024 exponent bits: a top window of 4 bits, then 204 windows of 5.
    const BITS: usize = 1024;
    let top = BITS - BITS % WINDOW;
    let window = |pos: usize, width: usize| lanes(keys.map(|k| window_bits(k.exp, pos, width)));
    let mut acc = select(&table, &window(top, BITS % WINDOW));
    let mut pos = top;
    while pos > 0 {
        pos -= WINDOW;
        for _ in 0..WINDOW {
            acc = mont_sqr(&acc, &n, &k0);
        }
        acc = mont_mul(&acc, &select(&table, &window(pos, WINDOW)), &n, &k0);
    }
    if let Some(b) = blind {
        // acc·r⁻¹: still in Montgomery form, below 2n (2n·n < R·n).
        acc = mont_mul(&acc, &b.ai, &n, &k0);
    }
    // Out of Montgomery form: MM(acc, 1) ≤ n; equal only when x ≡ 0, which the subtraction maps to 0.
    // The table, the accumulator and every other value here reveal the key's factors
    // (gcd(x·R − table[1], n) = p): each is wiped as it is dropped.
    reduce_once(&mont_mul(&acc, &one, &n, &k0), &n)
}
