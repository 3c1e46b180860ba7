//! The CSV invite parser, `users::import::parse`, used by `POST /v1/users/invite` and by
//! `latchkey user import`. First byte: the row limit (1..=64, or the default 100 000 when 0).

#![no_main]

use std::collections::HashSet;
use std::sync::OnceLock;

use latchkey_domain::users::import::parse;
use libfuzzer_sys::fuzz_target;

fn roles() -> &'static HashSet<String> {
    static R: OnceLock<HashSet<String>> = OnceLock::new();
    R.get_or_init(|| ["staff", "admin", "billing"].into_iter().map(str::to_owned).collect())
}

fuzz_target!(|data: &[u8]| {
    let Some((&limit, csv)) = data.split_first() else { return };
    let max_rows = if limit == 0 { 100_000 } else { u64::from(limit % 64) + 1 };
    let (rows, errors) = parse(csv, roles(), max_rows);
    // Accepted rows respect the limit and the rules every one of them was checked against.
    assert!(rows.len() as u64 <= max_rows);
    for r in &rows {
        assert!(latchkey_domain::webauthn::valid_email(&r.email), "accepted bad email {:?}", r.email);
        assert!(latchkey_domain::webauthn::valid_name(&r.name), "accepted bad name {:?}", r.name);
        assert!(r.roles.iter().all(|x| roles().contains(x)));
        assert!(r.line >= 2);
    }
    // A row may have several errors (e-mail, name, each unknown role), but never more than its
    // bytes: the report grows linearly with the file.
    assert!(errors.len() <= 2 * csv.len() + 2, "{} errors for {} bytes", errors.len(), csv.len());
    assert!(errors.iter().all(|e| e.row <= max_rows + 2));
});
