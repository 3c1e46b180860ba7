//! Bulk invitations from CSV (`email,name[,roles][,locale]`): whole-file validation, then one invitation per
//! new user. Used by `POST {api_url}/v1/users/invite` and by `latchkey user import`.

use std::collections::HashSet;

use latchkey::admin::{InvitedRow, RejectedRow};
use serde::Serialize;

use crate::clock::{Timestamp, rfc3339};
use crate::error::Error;
use crate::i18n::Locale;
use crate::ids;
use crate::store::tenants::TenantRow;
use crate::store::users::{NewUser, normalise_email};
use crate::store::{self, Db, InvitePurpose, ReadTx, Reader, TenantId, UserStatus, WriteTx};
use crate::users::batch::{Batch, PreviewStep, Steps, StoreStep};
use crate::webauthn::{valid_email, valid_name};

#[derive(Debug, Clone)]
pub struct Row {
    /// 1-based line number in the file (the header is line 1).
    pub line: u64,
    pub email: String,
    pub name: String,
    pub roles: Vec<String>,
    /// The `locale` column: the language of the user's e-mails.
    pub locale: Option<Locale>,
}

/// A CSV reading error in the caller's terms: what usually causes it, not the parser's words.
fn csv_problem(what: &str, e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { .. } => format!("{what} is not UTF-8 text; save the file as CSV UTF-8"),
        csv::ErrorKind::UnequalLengths { .. } => format!("{what} has a different number of columns"),
        _ => format!("{what} could not be read as CSV (check quotes and separators)"),
    }
}

/// Parses and checks every row; the caller refuses the file when any row is wrong. `known_roles`
/// are the tenant's role names. Stops after `max_rows` data rows with an error.
pub fn parse(data: &[u8], known_roles: &HashSet<String>, max_rows: u64) -> (Vec<Row>, Vec<RejectedRow>) {
    let (mut rows, mut errors) = (vec![], vec![]);
    let scanned = scan(data, known_roles, max_rows, |row| {
        match row {
            Ok(r) => rows.push(r),
            Err(e) => errors.push(e),
        }
        true
    });
    if let Err(header) = scanned {
        errors.push(header);
    }
    (rows, errors)
}

/// Reads the CSV from `input` one row at a time and hands each row, checked, to `each` (which
/// returns `false` to stop): memory does not grow with the file, but for 8 bytes a row of
/// duplicate check (a keyed 64-bit hash of each address seen). A wrong header is the error. The
/// same file scanned twice gives the same answers, so a first pass can check what a second one
/// stores (the API's all-or-nothing import).
pub fn scan<R: std::io::Read>(
    input: R,
    known_roles: &HashSet<String>,
    max_rows: u64,
    each: impl FnMut(Result<Row, RejectedRow>) -> bool,
) -> Result<(), RejectedRow> {
    scan_with(input, known_roles, max_rows, 0, each)
}

/// [`scan`], with the duplicate check's table made up front for `expected_rows` rows when that is
/// known (0: grown as it fills; growing holds the old table and the new one at once, half again
/// as much at the moment it happens).
pub fn scan_with<R: std::io::Read>(
    input: R,
    known_roles: &HashSet<String>,
    max_rows: u64,
    expected_rows: usize,
    mut each: impl FnMut(Result<Row, RejectedRow>) -> bool,
) -> Result<(), RejectedRow> {
    let err = |row: u64, column: &str, reason: String| RejectedRow { row, column: column.to_owned(), reason };
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(true).trim(csv::Trim::All).from_reader(input);
    let header: Vec<String> = match reader.headers() {
        Ok(h) => h.iter().map(|s| s.trim_start_matches('\u{feff}').to_ascii_lowercase()).collect(),
        Err(e) => return Err(err(1, "header", csv_problem("the header", &e))),
    };
    let (with_roles, with_locale) = match header.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["email", "name"] => (false, false),
        ["email", "name", "roles"] => (true, false),
        ["email", "name", "locale"] => (false, true),
        ["email", "name", "roles", "locale"] => (true, true),
        _ => {
            let got = header.join(",");
            return Err(err(
                1,
                "header",
                format!("the header must be email,name followed by roles and/or locale (in that order); found {got:?}"),
            ));
        }
    };
    let hasher = SEEN_KEY.get_or_init(std::hash::RandomState::new);
    let capacity = expected_rows.min(usize::try_from(max_rows).unwrap_or(usize::MAX));
    let mut seen: HashSet<u64, Prehashed> = HashSet::with_capacity_and_hasher(capacity, Prehashed);
    let mut record = csv::StringRecord::new();
    let mut i: u64 = 0;
    loop {
        let line = i + 2;
        let read = reader.read_record(&mut record);
        if matches!(read, Ok(false)) {
            break;
        }
        // Every record counts towards the limit, the unreadable ones too: a file of bad rows
        // must not be scanned, and its errors kept, beyond it.
        i += 1;
        if i > max_rows {
            each(Err(err(line, "file", format!("more than {max_rows} rows (limits.invite_rows_max)"))));
            break;
        }
        if let Err(e) = read {
            // An I/O error (the body ended early) ends the scan; a bad row is reported.
            let stop = matches!(e.kind(), csv::ErrorKind::Io(_));
            if !each(Err(err(line, "row", csv_problem("this row", &e)))) || stop {
                break;
            }
            continue;
        }
        let want = 2 + usize::from(with_roles) + usize::from(with_locale);
        if record.len() != want {
            if !each(Err(err(line, "row", format!("{} columns, expected {want}", record.len())))) {
                break;
            }
            continue;
        }
        let email = record.get(0).unwrap_or_default().to_owned();
        let name = record.get(1).unwrap_or_default().to_owned();
        let mut problems = vec![];
        if !valid_email(&email) {
            problems.push(err(line, "email", format!("{email:?} is not an e-mail address")));
        } else if !seen.insert(std::hash::BuildHasher::hash_one(hasher, normalise_email(&email))) {
            problems.push(err(line, "email", format!("{email} appears earlier in the file")));
        }
        if !valid_name(&name) {
            problems.push(err(line, "name", "must be 1-64 printable characters".into()));
        }
        let roles: Vec<String> = if with_roles {
            record
                .get(2)
                .unwrap_or_default()
                .split(';')
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
                .collect()
        } else {
            vec![]
        };
        for r in &roles {
            if !known_roles.contains(r) {
                problems.push(err(line, "roles", format!("role {r:?} does not exist")));
            }
        }
        // Empty: English (or the language kept with the user).
        let locale = match record.get(want - 1).filter(|_| with_locale).unwrap_or_default() {
            "" => None,
            tag => {
                let parsed = Locale::parse(tag);
                if parsed.is_none() {
                    let tag: String = tag.chars().take(32).collect();
                    problems.push(err(
                        line,
                        "locale",
                        format!("{tag:?} is not a language Latchkey speaks: en, de, fr, es, pt-BR, ja or zh-CN"),
                    ));
                }
                parsed
            }
        };
        let go_on = if problems.is_empty() {
            each(Ok(Row { line, email, name, roles, locale }))
        } else {
            problems.into_iter().all(|p| each(Err(p)))
        };
        if !go_on {
            break;
        }
    }
    Ok(())
}

/// The key of the duplicate check's hash: one per process, so two scans of a file agree.
static SEEN_KEY: std::sync::OnceLock<std::hash::RandomState> = std::sync::OnceLock::new();

/// The duplicate check's set holds keyed hashes already: its table uses them as they are
/// instead of hashing them a second time.
#[derive(Debug, Clone, Copy, Default)]
struct Prehashed;

impl std::hash::BuildHasher for Prehashed {
    type Hasher = PrehashedHasher;
    fn build_hasher(&self) -> PrehashedHasher {
        PrehashedHasher(0)
    }
}

#[derive(Debug, Default)]
struct PrehashedHasher(u64);

impl std::hash::Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `u64`s are hashed here (below); anything else still gets a spread of its bytes.
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Rows a file can hold at most: its line breaks, plus a last line without one. A quick count
/// before the first pass, so that the duplicate check's table is made once at its size.
/// The largest CSV file `latchkey user import` sends over the admin socket: 4 GiB, about a hundred
/// million rows (the file is spilled to disk as it arrives, so memory does not grow with it).
pub const CLI_FILE_MAX: u64 = 4 << 30;

pub fn count_lines<R: std::io::Read>(mut input: R) -> std::io::Result<usize> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = 1;
    loop {
        match input.read(&mut buf) {
            Ok(0) => return Ok(lines),
            Ok(n) => lines += buf[..n].iter().filter(|&&b| b == b'\n').count(),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Outcome {
    pub invited: Vec<InvitedRow>,
    pub already_present: Vec<String>,
}

impl Batch for Outcome {
    fn invited(&mut self) -> &mut Vec<InvitedRow> {
        &mut self.invited
    }

    fn others(&self) -> usize {
        self.already_present.len()
    }
}

/// A dry run of [`invite_rows`]: who would be invited (with an empty link), who is present.
pub fn preview_rows(tx: &impl Reader, tenant: TenantId, rows: &[Row], out: &mut Outcome) -> Result<(), Error> {
    for row in rows {
        if store::users::by_email(tx, tenant, &row.email)?.is_some() {
            out.already_present.push(row.email.clone());
        } else {
            out.invited.push(InvitedRow {
                email: row.email.clone(),
                name: row.name.clone(),
                invite_url: String::new(),
                emailed: None,
                email_error: None,
                locale: row.locale.map(|l| l.tag().to_owned()),
            });
        }
    }
    Ok(())
}

/// Invites each new user of `rows` in the caller's transaction; users that exist are reported,
/// not invited again. `out` gets both lists in the order of `rows`.
pub fn invite_rows(
    tx: &WriteTx<'_>,
    tenant: TenantId,
    base_url: &str,
    rows: &[Row],
    now: Timestamp,
    expires_at: Timestamp,
    out: &mut Outcome,
) -> Result<(), Error> {
    let roles: std::collections::HashMap<String, i64> =
        store::roles::list(tx, tenant)?.into_iter().map(|r| (r.name, r.id)).collect();
    // The users' other keys (public id, handle, token) are made in time order and go in at the
    // end of their indexes (`ids`); the e-mail index is keyed by the addresses, in whatever order
    // the file has. Taken in address order, the batch walks that index once from left to right,
    // each leaf page it touches visited by consecutive rows while it is in the cache.
    let mut order: Vec<(String, usize)> =
        rows.iter().enumerate().map(|(i, r)| (normalise_email(&r.email), i)).collect();
    order.sort_unstable();
    let mut links: Vec<Option<String>> = vec![None; rows.len()];
    for (_, i) in order {
        let row = &rows[i];
        let fresh = ids::new_user()?;
        let new = NewUser {
            public_id: &fresh.public_id,
            user_handle: &fresh.handle,
            email: &row.email,
            name: &row.name,
            status: UserStatus::Invited,
            created_at: now,
        };
        // Present already (an earlier run, or invited since): reported, not invited again.
        let Some(id) = store::users::insert_if_new(tx, tenant, &new)? else { continue };
        if let Some(l) = row.locale {
            store::users::set_locale(tx, tenant, id, l.tag())?;
        }
        for r in &row.roles {
            if let Some(role) = roles.get(r) {
                store::roles::assign(tx, tenant, id, *role)?;
            }
        }
        // A user created just now has no older invitation to withdraw (`issue_token`).
        store::invites::insert(tx, tenant, id, &fresh.token_key, InvitePurpose::Invite, now, expires_at)?;
        links[i] = Some(format!("{base_url}/invite/{}", fresh.token));
    }
    for (row, link) in rows.iter().zip(links) {
        match link {
            Some(invite_url) => out.invited.push(InvitedRow {
                email: row.email.clone(),
                name: row.name.clone(),
                invite_url,
                emailed: None,
                email_error: None,
                locale: row.locale.map(|l| l.tag().to_owned()),
            }),
            None => out.already_present.push(row.email.clone()),
        }
    }
    Ok(())
}

pub fn expires(now: Timestamp, ttl: i64) -> (Timestamp, String) {
    (now + ttl, rfc3339(now + ttl))
}

/// The tenant of `slug` and its role names: what an import checks its rows against.
pub async fn tenant_and_roles(db: &Db, slug: String) -> Result<(TenantRow, HashSet<String>), Error> {
    db.read(move |tx| -> Result<_, Error> {
        let t = crate::tenants::require(tx, &slug)?;
        let roles = store::roles::list(tx, t.id)?.into_iter().map(|r| r.name).collect();
        Ok((t, roles))
    })
    .await
}

/// The import's steps for [`super::bulk::run`]: each batch's new users invited with links valid
/// until `expires_at`, or, with `dry_run`, only counted.
pub fn steps(
    tenant: &TenantRow,
    now: Timestamp,
    expires_at: Timestamp,
    dry_run: bool,
) -> Steps<impl StoreStep<Row, Outcome>, impl PreviewStep<Row, Outcome>> {
    let preview = |tx: &ReadTx<'_>, t, rows: &[Row], o: &mut Outcome| preview_rows(tx, t, rows, o);
    Steps::for_tenant(tenant, now, expires_at, dry_run, invite_rows, preview)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles() -> HashSet<String> {
        ["staff".to_owned()].into_iter().collect()
    }

    #[test]
    fn every_bad_row_is_reported() {
        let csv =
            "email,name,roles\nada@x.test,Ada,staff\nbad,Bob,\nada@X.test,Again,\ncy@x.test,,\ndi@x.test,Di,ghost\n";
        let (rows, errors) = parse(csv.as_bytes(), &roles(), 100);
        assert_eq!(rows.len(), 1);
        let summary: Vec<(u64, &str)> = errors.iter().map(|e| (e.row, e.column.as_str())).collect();
        assert_eq!(summary, [(3, "email"), (4, "email"), (5, "name"), (6, "roles")]);
    }

    #[test]
    fn a_table_made_for_the_expected_rows_finds_the_same_duplicates() {
        let csv = "email,name\nada@x.test,Ada\nbob@x.test,Bob\nADA@x.test,Again\n";
        let mut seen = vec![];
        scan_with(csv.as_bytes(), &roles(), 10, count_lines(csv.as_bytes()).unwrap(), |r| {
            seen.push(r.map(|r| r.line).map_err(|e| e.row));
            true
        })
        .unwrap();
        assert_eq!(seen, [Ok(2), Ok(3), Err(4)]);
        assert_eq!(count_lines(csv.as_bytes()).unwrap(), 5);
        assert_eq!(count_lines(&b"email,name"[..]).unwrap(), 1);
    }

    #[test]
    fn unreadable_rows_count_towards_the_row_limit() {
        // Rows that are not UTF-8 are errors of their own, and the limit still stops the scan.
        let mut csv = b"email,name\n".to_vec();
        for _ in 0..10 {
            csv.extend_from_slice(b"\xff@x.test,\xfe\n");
        }
        let (rows, errors) = parse(&csv, &roles(), 3);
        assert!(rows.is_empty());
        let summary: Vec<(u64, &str)> = errors.iter().map(|e| (e.row, e.column.as_str())).collect();
        assert_eq!(summary, [(2, "row"), (3, "row"), (4, "row"), (5, "file")]);
    }

    #[test]
    fn a_locale_column_names_each_users_language() {
        let csv = b"email,name,roles,locale\na@x.test,A,staff,de-AT\nb@x.test,B,,\nc@x.test,C,,tlh\nd@x.test,D,,pt\n";
        let (rows, errors) = parse(csv, &roles(), 10);
        let langs: Vec<_> = rows.iter().map(|r| (r.line, r.locale)).collect();
        assert_eq!(langs, [(2, Some(Locale::De)), (3, None), (5, Some(Locale::PtBr))]);
        assert_eq!((errors.len(), errors[0].row, errors[0].column.as_str()), (1, 4, "locale"));
        let (rows, errors) = parse(b"email,name,locale\na@x.test,A,ja\n", &roles(), 10);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!((rows[0].locale, rows[0].roles.len()), (Some(Locale::Ja), 0));
        let (_, errors) = parse(b"email,name,locale,roles\n", &roles(), 10);
        assert_eq!(errors[0].column, "header", "roles before locale");
    }

    #[test]
    fn header_and_limits() {
        assert_eq!(parse(b"mail,name\n", &roles(), 10).1[0].column, "header");
        let (rows, errors) = parse(b"\xef\xbb\xbfEmail,Name\na@x.test,A\nb@x.test,B\n", &roles(), 1);
        assert_eq!(rows.len(), 1);
        assert_eq!(errors[0].column, "file");
        let (rows, errors) = parse(b"email,name\n\"=cmd\"@x.test,\"=HYPERLINK(1)\"\n", &roles(), 10);
        assert!(errors.is_empty() || rows.is_empty());
    }
}
