//! RS256 signatures two at a time with AVX-512 IFMA, for CPUs that have it (Intel since Ice
//! Lake, AMD since Zen 4), when `[signing] rsa_engine = "ifma-pairs"` asks for it (aws-lc signs
//! otherwise; see the daemon's `oidc::signer`). An RSA-2048 signature is two 1,024-bit exponentiations (the
//! CRT halves, mod p and mod q); this signs two tokens at once as four independent
//! exponentiations, one per lane of a vector register, which on such CPUs is 1.3–1.4× the
//! throughput of signing them one after another with aws-lc (measured side by side: `cargo bench
//! --bench signing`). It is the "multi-buffer" technique of Intel's crypto_mb, written here for
//! this one key size.
//!
//! Safety of the keys:
//! - the arithmetic runs the same instructions whatever the key and message (no branch or memory
//!   address depends on them), which the signing bench checks statistically (a dudect-style
//!   fixed-against-random test of keys and messages);
//! - the exponentiations are blinded as aws-lc's are (`vector::blinding`): their base is the message
//!   times r^e for a fresh random r, their result multiplied by r⁻¹;
//! - every signature is checked against the public key with aws-lc before it leaves
//!   ([`sign_pair`]): a wrong CRT signature would reveal the key's factors, so one that fails its
//!   check is wiped and never returned (the daemon's signer then signs with aws-lc and logs an error);
//! - every value derived from the key (the primes in both limb forms, their Montgomery constants
//!   R², R³ and k0, the exponents, the blinding pairs, the exponent's table, the CRT halves,
//!   Garner's terms) is held in a type that is wiped when dropped and is neither `Copy` nor
//!   `Clone` (`vector::num::U1024`, `vector::num::L52`, `vector::kernel::Vec4`, `vector::kernel::Lanes`).
//!
//! Keys of another size, or whose primes are not both exactly 1,024 bits, use aws-lc only.

//!
//! This crate holds the workspace's only `unsafe` code (the vector intrinsics and the register
//! fence of `vector::kernel`), each block with its SAFETY comment. Its API is the same on every
//! target: where the vector code is not built (another architecture, or the feature `vector`
//! off), [`available`] is false and no key is ever prepared, so the daemon signs with aws-lc.

#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

#[cfg(all(target_arch = "x86_64", feature = "vector"))]
mod vector;

#[cfg(all(target_arch = "x86_64", feature = "vector"))]
pub use vector::{IfmaKey, available, pair_arithmetic_for_timing, sign_pair};

#[cfg(not(all(target_arch = "x86_64", feature = "vector")))]
mod portable {
    /// No vector signer here.
    pub fn available() -> bool {
        false
    }

    /// Never made where the vector code is not built.
    pub struct IfmaKey(std::convert::Infallible);

    impl std::fmt::Debug for IfmaKey {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("IfmaKey")
        }
    }

    impl IfmaKey {
        pub fn from_pkcs8(_der: &[u8]) -> Option<IfmaKey> {
            None
        }
    }

    pub fn sign_pair(_jobs: [(&IfmaKey, &[u8]); 2]) -> [Option<[u8; 256]>; 2] {
        [None, None]
    }

    #[doc(hidden)]
    pub fn pair_arithmetic_for_timing(_jobs: [(&IfmaKey, &[u8]); 2]) {}
}

#[cfg(not(all(target_arch = "x86_64", feature = "vector")))]
pub use portable::{IfmaKey, available, pair_arithmetic_for_timing, sign_pair};
