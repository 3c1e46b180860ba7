//! Access-token checks: `oidc::tokens::verify_access` / `verify_id_hint` and
//! `oidc::introspection::check_access` (with a real database), against a tenant runtime built as
//! the registry builds it, with one RSA key generated at start.
//!
//! First byte: even, the rest is a token string as presented in `Authorization: Bearer`;
//! odd, the rest is `header JSON \0 claims JSON`, which the target signs with the tenant's key
//! (`KID` in the header is replaced by the key's id) so mutations reach the header and claims
//! checks behind the signature, and the database lookups of a valid token.

#![no_main]

use std::sync::OnceLock;

use latchkey_fuzz::{b64, replace, split_at_byte};
use latchkeyd::fuzzing::tenant_runtime;
use latchkey_domain::oidc::introspection::check_access;
use latchkey_domain::oidc::keys::{SigningKey, generate};
use latchkey_domain::oidc::tokens::{verify_access, verify_id_hint};
use latchkey_store::tenants::{NewTenant, TenantRow};
use latchkey_store::users::NewUser;
use latchkey_store::{Db, Registration, TenantId, UserStatus};
use latchkey_domain::registry::TenantRuntime;
use libfuzzer_sys::fuzz_target;

const BASE_URL: &str = "http://localhost:8080/acme";
const NOW: i64 = 1_800_000_000;

struct Fixture {
    tenant: TenantRuntime,
    key: SigningKey,
    db: Db,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let g = generate(2048).expect("RSA key");
        let key = SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).expect("key");
        let signer = SigningKey::from_pkcs8(&g.kid, 2048, &g.pkcs8).expect("key");
        let dir = std::env::temp_dir().join(format!("latchkey-fuzz-jwt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let db = Db::open(&dir.join("latchkey.db")).expect("database");
        let id = db
            .write_blocking(|tx| -> Result<TenantId, latchkey_store::StoreError> {
                let t = latchkey_store::tenants::insert(
                    tx,
                    &NewTenant {
                        slug: "acme",
                        name: "Acme",
                        base_url: BASE_URL,
                        rp_id: "localhost",
                        registration: Registration::Invite,
                        created_at: 0,
                    },
                )?;
                latchkey_store::users::insert(
                    tx,
                    t,
                    &NewUser {
                        public_id: "u1",
                        user_handle: &[1; 16],
                        email: "ada@example.test",
                        name: "Ada",
                        status: UserStatus::Active,
                        created_at: 0,
                    },
                )?;
                Ok(t)
            })
            .expect("fixture rows");
        let row = TenantRow {
            id,
            slug: "acme".into(),
            name: "Acme".into(),
            base_url: BASE_URL.into(),
            rp_id: "localhost".into(),
            registration: Registration::Invite,
            created_at: 0,
            brand: Default::default(),
            attestation: Default::default(),
        };
        let tenant = tenant_runtime(&row, vec![signer], "http://localhost:8080").expect("tenant runtime");
        Fixture { tenant, key, db }
    })
}

fn check(token: &str) {
    let f = fixture();
    let _ = jsonwebtoken::decode_header(token);
    if let Ok(claims) = verify_access(&f.tenant, token, NOW) {
        let _ = (claims.has_scope("users:invite"), claims.is_client_token());
    }
    let _ = verify_id_hint(&f.tenant, token, NOW, None, 8 * 3600);
    let _ = verify_id_hint(&f.tenant, token, NOW, Some("app"), 8 * 3600);
    let token = token.to_owned();
    let _ = f.db.read_blocking(|tx| check_access(tx, &f.tenant, &token, NOW));
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode % 2 == 0 {
        if let Ok(token) = std::str::from_utf8(rest) {
            check(token);
        }
        return;
    }
    let f = fixture();
    let (header, claims) = split_at_byte(rest, 0);
    let header = replace(header, b"KID", f.key.kid.as_bytes());
    let mut token = format!("{}.{}", b64(&header), b64(claims));
    let Ok(sig) = f.key.sign_rs256(token.as_bytes()) else { return };
    token.push('.');
    token.push_str(&b64(&sig));
    check(&token);
});
