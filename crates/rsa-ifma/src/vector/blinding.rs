//! Base blinding of the CRT exponentiations, as aws-lc blinds its RSA signatures: the base of
//! each exponentiation is the message times r^e for a random r, and the result is multiplied by
//! r⁻¹, so the value the exponent meets is unknown to whoever chose the message (against timing
//! and power attacks that work with chosen inputs, as on unblinded RSA). The signature is the
//! same, byte for byte.
//!
//! Per CRT half: r_p mod p and r_q mod q, which by the CRT are one r mod n, so this is aws-lc's
//! blinding done on the halves. A pair is made without a modular inversion: for a random t,
//! r = t⁻¹ gives r⁻¹ = t and r^e = t^(p−1−e) (Fermat: t^(p−1) ≡ 1), one exponentiation of both
//! halves in the vector unit, which with four lanes makes two pairs for the work of one pair
//! signature; t comes from aws-lc's CSPRNG (2,048 random bits reduced mod p: uniform within
//! 2^−1024). As in OpenSSL and aws-lc (`BN_BLINDING`), a key's pair is then renewed by squaring
//! after each use (r ← r², which keeps r^e and r⁻¹ matched: (r²)^e = (r^e)², (r²)⁻¹ = (r⁻¹)²) and
//! made fresh from new randomness every [`FRESH_EVERY`] uses. The cost: one squaring per
//! signature, and one exponentiation per 64 signatures (about 3% of a pair signature's work).

use std::sync::{Mutex, PoisonError};

use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use super::IfmaKey;
use super::kernel;
use super::num::{self, L52};

/// Uses of one pair (squared in between) before a fresh one: aws-lc's `BN_BLINDING_COUNTER`.
pub const FRESH_EVERY: u32 = 32;

/// One key's blinding values, Montgomery form (·R mod the prime, below it): r^e and r⁻¹ for the
/// p half and for the q half.
#[derive(Zeroize, ZeroizeOnDrop)]
pub struct BlindPair {
    pub a: [L52; 2],
    pub ai: [L52; 2],
}

/// The pair the next signature with a key uses, how many have used it (squared each time), and
/// the second fresh pair of the last exponentiation, for when this one is used up.
#[derive(Zeroize, ZeroizeOnDrop)]
struct State {
    pair: BlindPair,
    uses: u32,
    spare: Option<BlindPair>,
}

/// A key's blinding state; none until its first signature.
#[derive(Default)]
pub struct Blinder(Mutex<Option<State>>);

impl Blinder {
    fn state(&self) -> std::sync::MutexGuard<'_, Option<State>> {
        // The state is replaced whole, never left half-written: a panic elsewhere breaks nothing.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many signatures have used the current pair or its squares.
    #[cfg(test)]
    pub(super) fn uses(&self) -> Option<u32> {
        self.state().as_ref().map(|s| s.uses)
    }
}

impl IfmaKey {
    /// The blinding for one signature with this key: the key's current pair, which is squared
    /// for the next; a fresh one every [`FRESH_EVERY`]. `None` when the random generator fails.
    pub(super) fn next_blinding(&self) -> Option<BlindPair> {
        {
            let mut slot = self.blinder.state();
            if let Some(state) = slot.as_mut() {
                if state.uses < FRESH_EVERY {
                    let next = self.squared(&state.pair);
                    state.uses += 1;
                    return Some(std::mem::replace(&mut state.pair, next));
                }
                if let Some(fresh) = state.spare.take() {
                    state.pair = self.squared(&fresh);
                    state.uses = 1;
                    return Some(fresh);
                }
            }
        }
        // Outside the lock: other signatures with this key need not wait for an exponentiation
        // (two that both find the pairs used up both make new ones; the later ones stay).
        let [fresh, spare] = self.fresh_blindings()?;
        let pair = self.squared(&fresh);
        *self.blinder.state() = Some(State { pair, uses: 1, spare: Some(spare) });
        Some(fresh)
    }

    /// Two new pairs from fresh randomness, in one exponentiation of four lanes (see the
    /// module's comment): for t₁ and t₂, (t^(p−1−e), t) mod p and (t^(q−1−e), t) mod q.
    pub(super) fn fresh_blindings(&self) -> Option<[BlindPair; 2]> {
        let mut t = Zeroizing::new([[0u8; 256]; 2]);
        for t in t.iter_mut() {
            aws_lc_rs::rand::fill(&mut t[..]).ok()?;
        }
        let ((lo1, hi1), (lo2, hi2)) = (num::split_2048(&t[0]), num::split_2048(&t[1]));
        let (p, q) = (&self.p, &self.q);
        let keys = [
            p.lane_with(&p.blind_exp),
            q.lane_with(&q.blind_exp),
            p.lane_with(&p.blind_exp),
            q.lane_with(&q.blind_exp),
        ];
        // SAFETY: `available()` was true when this key was made, so the CPU has the features.
        let (a, ai) = unsafe {
            let lo = kernel::pack([&lo1, &lo1, &lo2, &lo2]);
            let hi = kernel::pack([&hi1, &hi1, &hi2, &hi2]);
            let (n, k0) = (self.moduli(), self.k0s());
            let rr = kernel::pack([&p.rr, &q.rr, &p.rr, &q.rr]);
            let rrr = kernel::pack([&p.rrr, &q.rrr, &p.rrr, &q.rrr]);
            let one = num::L52::one();
            let one = kernel::pack([&one, &one, &one, &one]);
            // r^e = t^(prime−1−e), then into Montgomery form (·R: MM with R², below 2n, reduced).
            let plain = kernel::mod_exp(&lo, &hi, [&keys[0], &keys[1], &keys[2], &keys[3]], None);
            let a = kernel::reduce_once(&kernel::mont_mul(&plain, &rr, &n, &k0), &n);
            // r⁻¹ = t: t·R mod the prime as the exponentiation starts (below 4n), out of Montgomery
            // form (at most n) and back in (below 2n), reduced.
            let t_r = kernel::add(&kernel::mont_mul(&lo, &rr, &n, &k0), &kernel::mont_mul(&hi, &rrr, &n, &k0));
            let t = kernel::mont_mul(&t_r, &one, &n, &k0);
            let ai = kernel::reduce_once(&kernel::mont_mul(&t, &rr, &n, &k0), &n);
            (kernel::unpack(&a), kernel::unpack(&ai))
        };
        let [a_p1, a_q1, a_p2, a_q2] = a;
        let [ai_p1, ai_q1, ai_p2, ai_q2] = ai;
        Some([BlindPair { a: [a_p1, a_q1], ai: [ai_p1, ai_q1] }, BlindPair { a: [a_p2, a_q2], ai: [ai_p2, ai_q2] }])
    }

    /// The pair for r²: each value squared (in Montgomery form), fully reduced.
    pub(super) fn squared(&self, pair: &BlindPair) -> BlindPair {
        // SAFETY: as in `fresh_blinding`.
        let [a_p, a_q, ai_p, ai_q] = unsafe {
            let v = kernel::pack([&pair.a[0], &pair.a[1], &pair.ai[0], &pair.ai[1]]);
            let (n, k0) = (self.moduli(), self.k0s());
            kernel::unpack(&kernel::reduce_once(&kernel::mont_sqr(&v, &n, &k0), &n))
        };
        BlindPair { a: [a_p, a_q], ai: [ai_p, ai_q] }
    }

    /// (p, q, p, q) packed, with their `k0`: the lanes of the blinding's own arithmetic.
    unsafe fn moduli(&self) -> kernel::Vec4 {
        // SAFETY: the caller's (the CPU has the features).
        unsafe { kernel::pack([&self.p.n, &self.q.n, &self.p.n, &self.q.n]) }
    }

    unsafe fn k0s(&self) -> kernel::Lanes {
        // SAFETY: the caller's (the CPU has the features).
        unsafe { kernel::lanes([self.p.k0, self.q.k0, self.p.k0, self.q.k0]) }
    }
}
