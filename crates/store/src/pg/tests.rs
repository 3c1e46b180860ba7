//! Tests against a real PostgreSQL server. They run only with `LATCHKEY_TEST_PG=1` and the `PG*`
//! variables naming a server where the user may create databases, e.g. as root:
//! `pg_virtualenv -t sh -c 'LATCHKEY_TEST_PG=1 cargo test -p latchkey-store'`.
//! Each test gets a database of its own, dropped at the end.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use super::*;
use crate::sql::{ConnExt, params};

use crate::testing::postgres::{admin, test_db};

/// A file of a test's own, removed when the test ends, passed or failed.
struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A tenant row with every other column a placeholder.
fn insert_tenant(tx: &dyn Conn, slug: &str) -> Result<usize, StoreError> {
    tx.execute(
        "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at)
         VALUES (?1, ?1, ?1, 'r', 'open', 0)",
        params![slug],
    )
}

#[test]
fn open_migrates_once_and_again_changes_nothing() {
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    assert!(db.describe().ends_with(&format!("/{}", t.name)), "{}", db.describe());
    db.ping().unwrap();
    drop(db);
    let db = PgDb::open(&t.settings).unwrap();
    let (versions, max, generation): (i64, i64, i64) = db
        .read_blocking(|tx| {
            let v = tx.query_one("SELECT count(*), max(version)::BIGINT FROM latchkey_schema", params![], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            let g = tx.query_one("SELECT generation FROM cluster_state", params![], |r| r.get(0))?;
            Ok::<_, StoreError>((v.0, v.1, g))
        })
        .unwrap();
    assert_eq!(
        (versions, max),
        (crate::migrations::MIGRATIONS.len() as i64, crate::migrations::MIGRATIONS.len() as i64)
    );
    assert_eq!(generation, 0);
    assert!(db.pool_state().connections >= 1);
    migrate_only(&t.settings).unwrap();
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let Some(t) = test_db() else { return };
    migrate_only(&t.settings).unwrap();
    let mut c = t.client();
    c.batch_execute("INSERT INTO latchkey_schema (version, name) VALUES (99, 'future')").unwrap();
    let tables = |c: &mut postgres::Client| -> i64 {
        c.query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'", &[]).unwrap().get(0)
    };
    let before = tables(&mut c);
    let err = PgDb::open(&t.settings).unwrap_err().to_string();
    assert!(err.contains("schema version 99, newer than this latchkeyd understands"), "{err}");
    assert!(err.contains("not modified"), "{err}");
    assert_eq!(tables(&mut c), before);
    let max: i32 = c.query_one("SELECT max(version) FROM latchkey_schema", &[]).unwrap().get(0);
    assert_eq!(max, 99);
}

#[test]
fn a_newer_schema_is_served_only_when_its_record_names_this_release() {
    let Some(t) = test_db() else { return };
    migrate_only(&t.settings).unwrap();
    let newer = crate::migrations::SCHEMA_VERSION as i64 + 1;
    let mut c = t.client();
    c.execute("INSERT INTO latchkey_schema (version, name) VALUES ($1, 'future')", &[&(newer as i32)]).unwrap();
    let set = |c: &mut postgres::Client, serves_from: &str| {
        c.execute("UPDATE latchkey_release SET schema_version = $1, serves_from = $2", &[&newer, &serves_from])
            .unwrap();
    };
    set(&mut c, crate::schema::serves_from());
    let db = PgDb::open(&t.settings).unwrap();
    drop(db);
    let seen = peek_schema(&t.settings).unwrap();
    assert_eq!((seen.version, seen.serves_from.as_deref()), (newer as usize, Some(crate::schema::serves_from())));
    set(&mut c, "99.0.0");
    let err = PgDb::open(&t.settings).unwrap_err().to_string();
    assert!(err.contains("latchkeyd 99.0.0 or newer") && err.contains("not modified"), "{err}");
    let max: i32 = c.query_one("SELECT max(version) FROM latchkey_schema", &[]).unwrap().get(0);
    assert_eq!(i64::from(max), newer);
}

#[test]
fn every_value_type_round_trips_through_conn() {
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    let blob = vec![0u8, 255, 7];
    db.write_blocking(|tx| {
        assert_eq!(tx.engine(), crate::sql::Engine::Postgres);
        tx.batch("CREATE TABLE t (i BIGINT, n INTEGER, s TEXT, v VARCHAR(10), b BYTEA, f BOOLEAN)")?;
        let n = tx.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![1i64 << 40, 42u32, "text ' ?1", "vc", blob, true],
        )?;
        assert_eq!(n, 1);
        tx.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![None::<i64>, None::<u32>, None::<String>, None::<String>, None::<Vec<u8>>, false],
        )?;
        Ok::<_, StoreError>(())
    })
    .unwrap();
    let rows = db
        .read_blocking(|tx| {
            tx.query_all("SELECT i, n, s, v, b, f FROM t ORDER BY i NULLS LAST", params![], |r| {
                Ok((
                    r.get::<_, Option<i64>>(0)?,
                    r.get::<_, Option<u32>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<Vec<u8>>>(4)?,
                    r.get::<_, bool>(5)?,
                ))
            })
        })
        .unwrap();
    assert_eq!(
        rows,
        vec![
            (Some(1 << 40), Some(42), Some("text ' ?1".into()), Some("vc".into()), Some(blob), true),
            (None, None, None, None, None, false),
        ]
    );
    // The same text again comes from the statement cache; a typed NULL test prepares.
    let found = db
        .read_blocking(|tx| {
            tx.query_opt("SELECT s FROM t WHERE CAST(?1 AS TEXT) IS NULL OR s = ?1", params![Some("vc")], |r| {
                r.get::<_, Option<String>>(0)
            })
        })
        .unwrap();
    assert_eq!(found, None);
    let missing =
        db.read_blocking(|tx| tx.query_one("SELECT i FROM t WHERE i = ?1", params![5], |r| r.get::<_, i64>(0)));
    assert!(matches!(missing, Err(StoreError::NoRow(_))), "{missing:?}");
    // An integer out of range for an INTEGER column, text for an integer: errors, not truncation.
    let r = db.write_blocking(|tx| tx.execute("INSERT INTO t (n) VALUES (?1)", params![1i64 << 40]));
    assert!(r.unwrap_err().to_string().contains("out of range"));
    let r = db.write_blocking(|tx| tx.execute("INSERT INTO t (i) VALUES (?1)", params!["7"]));
    let e = r.unwrap_err().to_string();
    // Bound to a prepared statement, or refused by the server when the value comes typed.
    assert!(e.contains("cannot bind text") || e.contains("is of type bigint but expression is of type text"), "{e}");
    // A column type the façade has no value for is an error, not a panic.
    let r = db.read_blocking(|tx| tx.query_one("SELECT now()", params![], |r| r.get::<_, String>(0)));
    assert!(matches!(r, Err(StoreError::Postgres(_))), "{r:?}");
}

#[test]
fn a_unique_violation_is_recognised() {
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    let insert = |tx: &dyn Conn| {
        tx.execute(
            "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at)
             VALUES (?1, ?1, ?2, 'localhost', 'invite', 1) RETURNING id",
            params!["acme", "http://localhost/acme"],
        )
    };
    db.write_blocking(insert).unwrap();
    let err = db.write_blocking(insert).unwrap_err();
    assert!(err.is_unique_violation(), "{err}");
    let other = db.write_blocking(|tx| tx.execute("INSERT INTO tenants (slug) VALUES (?1)", params!["x"]));
    assert!(!other.unwrap_err().is_unique_violation(), "a NOT NULL violation is not a uniqueness conflict");
}

#[test]
fn two_concurrent_consumers_one_winner() {
    let Some(t) = test_db() else { return };
    let db = Arc::new(PgDb::open(&t.settings).unwrap());
    db.write_blocking(|tx| {
        tx.batch("CREATE TABLE codes (code TEXT PRIMARY KEY, payload BIGINT NOT NULL)")?;
        tx.execute("INSERT INTO codes VALUES (?1, ?2)", params!["c1", 7])
    })
    .unwrap();
    // Both transactions are open before either consumes; the first holds the row until it
    // commits, and the second, blocked on the row lock, then finds it gone.
    let barrier = Arc::new(Barrier::new(2));
    let consumers: Vec<_> = (0..2)
        .map(|i| {
            let (db, barrier) = (db.clone(), barrier.clone());
            std::thread::spawn(move || {
                db.write_blocking(|tx| {
                    tx.batch("SELECT 1")?;
                    barrier.wait();
                    if i == 1 {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    let got =
                        tx.query_opt("DELETE FROM codes WHERE code = ?1 RETURNING payload", params!["c1"], |r| {
                            r.get::<_, i64>(0)
                        })?;
                    std::thread::sleep(Duration::from_millis(200));
                    Ok::<_, StoreError>(got)
                })
                .unwrap()
            })
        })
        .collect();
    let results: Vec<Option<i64>> = consumers.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results.iter().filter(|r| r.is_some()).count(), 1, "{results:?}");
    assert!(results.contains(&Some(7)));
}

#[test]
fn a_failed_or_panicking_write_is_rolled_back() {
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    let r: Result<(), StoreError> = db.write_blocking(|tx| {
        insert_tenant(tx, "a")?;
        Err(StoreError::Corrupt("stop".into()))
    });
    assert!(r.is_err());
    let panicked = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let _ = db.write_blocking(|tx| {
            let _ = insert_tenant(tx, "b");
            #[allow(clippy::panic)]
            if true {
                panic!("in the middle of a write");
            }
            Ok::<_, StoreError>(())
        });
    }));
    assert!(panicked.is_err());
    db.write_blocking(|tx| insert_tenant(tx, "c")).unwrap();
    let slugs = db.read_blocking(|tx| {
        tx.query_all("SELECT slug FROM tenants ORDER BY slug", params![], |r| r.get::<_, String>(0))
    });
    assert_eq!(slugs.unwrap(), vec!["c".to_owned()]);
}

#[test]
fn reads_see_one_snapshot_and_cannot_write() {
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    let err = db.read_blocking(|tx| tx.batch("CREATE TABLE x (i BIGINT)")).unwrap_err();
    assert!(err.to_string().contains("read-only"), "{err}");
    let seen = db
        .read_blocking(|tx| {
            let before: i64 = tx.query_one("SELECT count(*) FROM tenants", params![], |r| r.get(0))?;
            db.write_blocking(|w| insert_tenant(w, "s"))?;
            let after: i64 = tx.query_one("SELECT count(*) FROM tenants", params![], |r| r.get(0))?;
            Ok::<_, StoreError>((before, after))
        })
        .unwrap();
    assert_eq!(seen, (0, 0), "a read transaction keeps its snapshot");
}

#[test]
fn sslmodes_encrypt_and_verify() {
    let Some(t) = test_db() else { return };
    let mut c = t.client();
    let ssl: String = c.query_one("SHOW ssl", &[]).unwrap().get(0);
    if ssl != "on" {
        eprintln!("skipped: the server has ssl = off");
        return;
    }
    // pg_virtualenv's server certificate is Debian's self-signed snakeoil one, for "localhost".
    let cert: String = c.query_one("SHOW ssl_cert_file", &[]).unwrap().get(0);
    let url_file = std::env::temp_dir().join(format!("{}-tls.url", t.name));
    let _remove = TempFile(url_file.clone());
    let settings = PgSettings { url_file: Some(url_file.clone()), ..t.settings.clone() };
    let open = |conninfo: String| {
        std::fs::write(&url_file, format!("dbname={} {conninfo}", t.name)).unwrap();
        let db = PgDb::open(&settings)?;
        db.read_blocking(|tx| {
            tx.query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", params![], |r| r.get::<_, bool>(0))
        })
    };
    assert!(open("host=localhost sslmode=require".into()).unwrap(), "require encrypts");
    assert!(!open("host=localhost sslmode=disable".into()).unwrap(), "disable does not");
    assert!(open(format!("host=localhost sslmode=verify-full sslrootcert={cert}")).unwrap());
    // The certificate names "localhost", not 127.0.0.1: verify-ca does not care, verify-full does.
    assert!(open(format!("host=127.0.0.1 sslmode=verify-ca sslrootcert={cert}")).unwrap());
    let err = open(format!("host=127.0.0.1 sslmode=verify-full sslrootcert={cert}")).unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
}

#[test]
fn a_statement_is_prepared_once_per_connection() {
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    let sql = "SELECT count(*) FROM tenants WHERE slug = ?1 OR slug = ?1";
    let prepared = db
        .write_blocking(|tx| {
            for slug in ["a", "b", "c"] {
                tx.query_one(sql, params![slug], |r| r.get::<_, i64>(0))?;
            }
            tx.query_one(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement = ?1",
                params![rewrite::placeholders(sql)],
                |r| r.get::<_, i64>(0),
            )
        })
        .unwrap();
    // Through a transaction pooler nothing is prepared: nothing is left behind on a server
    // connection for the pooler's next client.
    assert_eq!(prepared, if t.pooled() { 0 } else { 1 });
}

#[test]
fn nodes_starting_together_migrate_once() {
    let Some(t) = test_db() else { return };
    let settings = Arc::new(t.settings.clone());
    let starts: Vec<_> = (0..3)
        .map(|_| {
            let settings = settings.clone();
            std::thread::spawn(move || PgDb::open(&settings).map(|_| ()))
        })
        .collect();
    for start in starts {
        start.join().unwrap().unwrap();
    }
    let mut c = t.client();
    let rows: i64 = c.query_one("SELECT count(*) FROM latchkey_schema", &[]).unwrap().get(0);
    assert_eq!(rows, crate::migrations::MIGRATIONS.len() as i64);
}

/// store::cluster over this engine: the journal, the listener and its acknowledgement, the
/// admin lock and job claims.
#[test]
fn cluster_functions_run_on_this_engine() {
    use crate::{ReadTx, WriteTx, cluster};
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    let tenant: i64 = db
        .write_blocking(|tx| {
            tx.query_one(
                "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at)
                 VALUES ('acme', 'Acme', 'http://localhost/acme', 'localhost', 'open', 1) RETURNING id",
                params![],
                |r| r.get(0),
            )
        })
        .unwrap();
    let node = cluster::NodeInfo { id: "node-a".into(), host: "h".into(), version: "test".into() };
    let (listener, mut batches) = cluster::Listener::start(db.connect_fn(), node, 0).unwrap();
    let generation = db
        .write_blocking(|c| {
            let tx = &WriteTx(c);
            cluster::admin_lock(tx)?;
            cluster::changed(c, crate::TenantId(tenant))?;
            cluster::generation(tx)
        })
        .unwrap();
    assert_eq!(generation, 1);
    let batch = batches.blocking_recv().unwrap();
    assert_eq!((batch.generation, batch.slugs.clone(), batch.full), (1, vec!["acme".to_owned()], false));
    batch.done.send(()).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        let lagging = db.read_blocking(|c| cluster::lagging_nodes(&ReadTx(c), "node-b", 1)).unwrap();
        if lagging == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "node-a never acknowledged generation 1");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(db.read_blocking(|c| cluster::live_nodes(&ReadTx(c))).unwrap(), 1);
    assert!(db.write_blocking(|c| cluster::claim_job(&WriteTx(c), "sweep", 55)).unwrap());
    assert!(!db.write_blocking(|c| cluster::claim_job(&WriteTx(c), "sweep", 55)).unwrap(), "once per interval");
    db.write_blocking(|c| cluster::sweep(&WriteTx(c))).unwrap();
    listener.stop();
}

#[test]
fn bulk_invites_run_on_this_engine() {
    use crate::users::{NewUser, by_email, insert_if_new};
    use crate::{InvitePurpose, ReadTx, TenantId, UserStatus, WriteTx, invites};
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    let tenant = TenantId(
        db.write_blocking(|tx| {
            tx.query_one(
                "INSERT INTO tenants (slug, name, base_url, rp_id, registration, created_at)
                 VALUES ('acme', 'Acme', 'http://localhost/acme', 'localhost', 'invite', 1) RETURNING id",
                params![],
                |r| r.get(0),
            )
        })
        .unwrap(),
    );
    // A new user and their first invitation, as an import stores them; the same address again
    // is "already present", not an error; the invitation is found by its key (38 bytes, or a
    // legacy 32-byte one) and only in its tenant. Keys are opaque bytes to the store.
    let (key, legacy) = (vec![1u8; 38], vec![9u8; 32]);
    db.write_blocking(|c| {
        let tx = &WriteTx(c);
        let new = NewUser {
            public_id: "0190a4f2-0000-7000-8000-000000000001",
            user_handle: &[7u8; 16],
            email: "Ada@example.com",
            name: "Ada",
            status: UserStatus::Invited,
            created_at: 1,
        };
        let id = insert_if_new(tx, tenant, &new)?.expect("a new user");
        invites::insert(tx, tenant, id, &key, InvitePurpose::Invite, 1, 100)?;
        let again = NewUser { email: "ada@EXAMPLE.com", ..new };
        assert_eq!(insert_if_new(tx, tenant, &again)?, None);
        invites::insert(tx, tenant, id, &legacy, InvitePurpose::Recovery, 1, 100)?;
        Ok::<_, StoreError>(())
    })
    .unwrap();
    db.read_blocking(|c| {
        let tx = &ReadTx(c);
        let ada = by_email(tx, tenant, "ada@example.com")?.expect("stored");
        let found = invites::valid(tx, tenant, &key, 10)?.expect("found by its key");
        assert_eq!((found.user_id, found.purpose), (ada.id, InvitePurpose::Invite));
        assert!(invites::valid(tx, tenant, &legacy, 10)?.expect("legacy").is_recovery());
        assert!(invites::valid(tx, TenantId(tenant.0 + 1), &key, 10)?.is_none());
        Ok::<_, StoreError>(())
    })
    .unwrap();
}

/// The client-credentials grant's application cache on this engine: a transaction that changes
/// applications or tenants (it calls `cluster::changed`) keeps the cache unused from that call
/// until it has committed or rolled back, and leaves every entry read before it stale.
#[test]
fn a_change_to_applications_keeps_the_cache_unused_until_its_transaction_ends() {
    use crate::testing::{m2m_app, tenant};
    use crate::{StoreError, WriteTx, cluster};
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    let tenant = db.write_blocking(|c| Ok::<_, StoreError>(tenant(&WriteTx(c), "acme"))).unwrap();
    let row = |id: &str| m2m_app(id, &[1]);
    let apps = db.apps();
    apps.remember(apps.epoch(), tenant, row("c"));
    assert!(apps.get(tenant, "c").is_some(), "kept");
    db.write_blocking(|c| {
        cluster::changed(c, tenant)?;
        assert!(apps.get(tenant, "c").is_none(), "a change is under way");
        apps.remember(apps.epoch(), tenant, row("d"));
        assert!(apps.get(tenant, "d").is_none(), "read while the change was under way");
        Ok::<_, StoreError>(())
    })
    .unwrap();
    assert!(apps.get(tenant, "c").is_none(), "read before the change");
    apps.remember(apps.epoch(), tenant, row("c"));
    assert!(apps.get(tenant, "c").is_some(), "read after it");
    let refused: Result<(), StoreError> = db.write_blocking(|c| {
        cluster::changed(c, tenant)?;
        Err(StoreError::Corrupt("refused".into()))
    });
    assert!(refused.is_err());
    assert!(apps.get(tenant, "c").is_none(), "a rolled-back change moves the cache too");
    apps.remember(apps.epoch(), tenant, row("c"));
    assert!(apps.get(tenant, "c").is_some(), "and nothing is left under way");
}

/// `each_blocking`: statements outside a transaction, each seeing what committed before it, a
/// single-statement write that cannot run a second statement, and a run again on another
/// connection when its own was closed by the server (every pooled one here).
#[test]
fn statements_outside_a_transaction() {
    let Some(t) = test_db() else { return };
    // The pool's own connections, closed by the server: past any pooler.
    let db = PgDb::open(&t.direct()).unwrap();
    let count = |tx: &dyn Conn| tx.query_one("SELECT count(*) FROM tenants", params![], |r| r.get::<_, i64>(0));
    // No common snapshot: the second count sees a write committed between the two.
    let seen = db
        .each_blocking(None, |tx| {
            let before = count(tx)?;
            db.write_blocking(|w| insert_tenant(w, "between"))?;
            Ok::<_, StoreError>((before, count(tx)?))
        })
        .unwrap();
    assert_eq!(seen, (0, 1), "each statement sees what committed before it");
    // One statement: it commits by itself. A second is refused before it reaches the server,
    // but the first has committed by then: the bound catches a bug, it cannot undo it.
    db.each_blocking(Some(1), |tx| insert_tenant(tx, "one")).unwrap();
    let err =
        db.each_blocking(Some(1), |tx| insert_tenant(tx, "two").and_then(|_| insert_tenant(tx, "three"))).unwrap_err();
    assert!(err.to_string().contains("second statement"), "{err}");
    // A failing single statement stores nothing.
    assert!(db.each_blocking(Some(1), |tx| insert_tenant(tx, "one")).unwrap_err().is_unique_violation());
    let slugs = |db: &PgDb| {
        db.read_blocking(|tx| {
            tx.query_all("SELECT slug FROM tenants ORDER BY slug", params![], |r| r.get::<_, String>(0))
        })
        .unwrap()
    };
    assert_eq!(slugs(&db), ["between", "one", "two"]);

    // Every connection of the pool (4) open at once, then closed by the server.
    let barrier = Barrier::new(4);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| db.read_blocking(|_| Ok::<_, StoreError>(barrier.wait())).unwrap());
        }
    });
    assert_eq!(db.pool_state().connections, 4);
    let mut admin = admin();
    let pool = "FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()";
    admin.query(&format!("SELECT pg_terminate_backend(pid) {pool}"), &[&t.name]).unwrap();
    while !admin.query(&format!("SELECT pid {pool}"), &[&t.name]).unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The write meets the closed connections, runs again on a new one, and is stored once.
    db.each_blocking(Some(1), |tx| insert_tenant(tx, "after")).unwrap();
    assert_eq!(slugs(&db), ["after", "between", "one", "two"]);
    assert_eq!(db.each_blocking(None, count).unwrap(), 4);
}

/// Behind a transaction pooler a node sets nothing for its sessions: it names each statement
/// bound the role lacks, and prepares nothing. (The pool connects straight to the server here,
/// in the pooler's mode: the sessions have what the database and role give them, no more.)
#[test]
fn a_pooled_node_names_the_bounds_its_role_lacks() {
    let Some(t) = test_db() else { return };
    let mut admin = t.client();
    admin.batch_execute(&format!("ALTER DATABASE {} RESET ALL", t.name)).unwrap();
    let pooled = t.through_pooler(&t.url_file);
    let db = PgDb::open(&pooled).unwrap();
    let user: String = admin.query_one("SELECT current_user::text", &[]).unwrap().get(0);
    assert_eq!(
        unbounded(&db).unwrap(),
        [
            format!("ALTER ROLE \"{user}\" SET statement_timeout = '30s'"),
            format!("ALTER ROLE \"{user}\" SET idle_in_transaction_session_timeout = '60s'"),
            format!("ALTER ROLE \"{user}\" SET lock_timeout = '10s'"),
        ]
    );
    let prepared = db.read_blocking(|tx| {
        tx.query_one("SELECT count(*) FROM pg_prepared_statements", params![], |r| r.get::<_, i64>(0))
    });
    assert_eq!(prepared.unwrap(), 0);
    drop(db);
    // Set for the database here (for the role in production: docs/scaling.md), they hold.
    for (name, value) in SESSION_BOUNDS {
        admin.batch_execute(&format!("ALTER DATABASE {} SET {name} = '{value}'", t.name)).unwrap();
    }
    assert_eq!(unbounded(&PgDb::open(&pooled).unwrap()).unwrap(), Vec::<String>::new());
}

/// Behind PgBouncer, a transaction that waits past `query_wait_timeout` for a server connection
/// fails once, as unavailable (503): it does not start again on each of the pool's other
/// connections, which would each wait as long. Needs `scripts/with-pgbouncer.sh`'s PgBouncer
/// whose `query_wait_timeout` is 1 s.
#[test]
fn a_starved_pooler_fails_a_request_once() {
    let Some(t) = test_db() else { return };
    let Some(quick) = std::env::var("LATCHKEY_TEST_PGBOUNCER_QUICK").ok().filter(|v| !v.is_empty()) else {
        return eprintln!("skipped: run under scripts/with-pgbouncer.sh");
    };
    let (host, port) = quick.rsplit_once(':').unwrap();
    let url = std::env::temp_dir().join(format!("{}.quick.url", t.name));
    let _remove = TempFile(url.clone());
    std::fs::write(&url, format!("host={host} port={port} dbname={}", t.name)).unwrap();
    let settings = t.through_pooler(&url);
    let db = PgDb::open(&settings).unwrap();
    // Every server connection PgBouncer has for the database (3) held by an open transaction.
    let target = settings.resolve().unwrap();
    let holders: Vec<postgres::Client> = (0..3)
        .map(|_| {
            let mut c = target.config.connect(tls::connector(&target).unwrap()).unwrap();
            c.batch_execute("BEGIN; SELECT 1").unwrap();
            c
        })
        .collect();
    // One wait took 1 to 2.5 s with PgBouncer 1.18 in these runs. Started again, the request
    // would wait on each of the pool's 4 connections and one more: 5 s or more.
    let within = |what: &str, r: Result<usize, StoreError>, started: std::time::Instant| {
        let took = started.elapsed();
        assert!(matches!(&r, Err(StoreError::Unavailable(_))), "{what}: {r:?} after {took:?}");
        assert!(took < Duration::from_secs(4), "{what}: failed after {took:?}, not after one wait: {r:?}");
    };
    let started = std::time::Instant::now();
    within("a transaction", db.write_blocking(|tx| insert_tenant(tx, "waits")), started);
    let started = std::time::Instant::now();
    within("a statement", db.each_blocking(Some(1), |tx| insert_tenant(tx, "waits")), started);
    drop(holders);
    assert_eq!(db.write_blocking(|tx| insert_tenant(tx, "served")).unwrap(), 1);
}

/// Behind a PgBouncer set up as production would run it (`scripts/with-pgbouncer.sh`'s third):
/// TLS required of clients, checked against its CA and name as `verify-full` asks; TLS on to the
/// server; SCRAM secrets rather than passwords in its `auth_file`, so that it logs in to the
/// server with the node's own proof.
#[test]
fn a_pooler_is_reached_over_tls_and_scram_as_in_production() {
    let Some(t) = test_db() else { return };
    let (Some(port), Ok(ca)) = (
        std::env::var("LATCHKEY_TEST_PGBOUNCER_TLS").ok().filter(|v| !v.is_empty()),
        std::env::var("LATCHKEY_TEST_PGBOUNCER_TLS_CA"),
    ) else {
        return eprintln!("skipped: run under scripts/with-pgbouncer.sh, with a server that has TLS on");
    };
    let url = std::env::temp_dir().join(format!("{}.tls.url", t.name));
    let _remove = TempFile(url.clone());
    let settings = t.through_pooler(&url);
    let open = |conninfo: &str| {
        std::fs::write(&url, format!("port={port} dbname={} {conninfo}", t.name)).unwrap();
        let db = PgDb::open(&settings)?;
        // The server connection PgBouncer runs the statement on.
        db.write_blocking(|tx| {
            insert_tenant(tx, "over-tls")?;
            tx.query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", params![], |r| r.get::<_, bool>(0))
        })
    };
    let verified = open(&format!("host=localhost sslmode=verify-full sslrootcert={ca}"));
    assert!(verified.unwrap(), "PgBouncer reaches the server over TLS");
    // The start fails at once, as with a wrong server URL, rather than the node starting and
    // answering 503: PgBouncer's own certificate, which the node checks, names localhost, not
    // 127.0.0.1; PgBouncer takes no client without TLS; and behind PgBouncer, which accepts the
    // login itself, the server has no such database.
    let name = &t.name;
    for conninfo in [
        format!("host=127.0.0.1 dbname={name} sslmode=verify-full sslrootcert={ca}"),
        format!("host=127.0.0.1 dbname={name} sslmode=disable"),
        format!("host=localhost dbname={name}_missing sslmode=verify-full sslrootcert={ca}"),
    ] {
        std::fs::write(&url, format!("port={port} {conninfo}")).unwrap();
        let started = std::time::Instant::now();
        let Err(err) = PgDb::open(&settings) else { panic!("{conninfo}: opened") };
        assert!(matches!(err, StoreError::Unavailable(_)), "{conninfo}: {err}");
        assert!(started.elapsed() < Duration::from_secs(5), "{conninfo}: failed after {:?}", started.elapsed());
    }
    let mut c = t.client();
    let tenants: i64 = c.query_one("SELECT count(*) FROM tenants", &[]).unwrap().get(0);
    assert_eq!(tenants, 1, "one write, through the verified connection");
}

#[test]
fn a_begun_write_is_under_way_before_it_is_awaited_here() {
    let Some(t) = test_db() else { return };
    crate::tests::begun_scenario(&crate::Db::open_postgres(&t.settings).unwrap());
}

#[test]
fn a_sign_in_start_is_one_statement_here() {
    let Some(t) = test_db() else { return };
    crate::sign_in::tests::start_scenario(&crate::Db::open_postgres(&t.settings).unwrap());
}

#[test]
fn a_sign_in_finish_is_one_statement_here() {
    let Some(t) = test_db() else { return };
    crate::sign_in::tests::scenario(&crate::Db::open_postgres(&t.settings).unwrap());
}

#[test]
fn a_sign_in_finish_reads_its_challenge_and_its_credential_here() {
    let Some(t) = test_db() else { return };
    crate::sign_in::tests::lookup_scenario(&crate::Db::open_postgres(&t.settings).unwrap());
}

#[test]
fn a_code_redemption_is_one_statement_here() {
    let Some(t) = test_db() else { return };
    crate::oidc::tests::redeem_scenario(&crate::Db::open_postgres(&t.settings).unwrap());
}

#[test]
fn a_refresh_rotation_is_one_statement_here() {
    let Some(t) = test_db() else { return };
    crate::oidc::tests::rotate_scenario(&crate::Db::open_postgres(&t.settings).unwrap());
}

#[test]
fn audit_batches_are_multi_row_inserts_here_too() {
    let Some(t) = test_db() else { return };
    crate::audit::tests::batches_round_trip(&crate::Db::open_postgres(&t.settings).unwrap());
}

#[test]
fn a_challenge_commits_without_waiting_for_the_wal_flush_and_only_its_own_transaction() {
    use crate::Reader;
    let Some(t) = test_db() else { return };
    let db = crate::Db::open_postgres(&t.settings).unwrap();
    let setting = |c: &dyn Conn| -> String {
        c.query_one("SELECT current_setting('synchronous_commit')", params![], |r| r.get(0)).unwrap()
    };
    let tenant = db.write_blocking(|tx| {
        insert_tenant(tx.conn(), "acme")?;
        tx.conn().query_one("SELECT id FROM tenants WHERE slug = 'acme'", params![], |r| r.get::<_, i64>(0))
    });
    let tenant = crate::TenantId(tenant.unwrap());
    let row = crate::challenges::ChallengeRow {
        challenge: "c1".into(),
        kind: crate::ChallengeKind::Discoverable,
        user_id: None,
        state: "{}".into(),
        context: "{}".into(),
        expires_at: 100,
    };
    let within = db
        .write_blocking(|tx| {
            crate::challenges::insert_unsynced(tx, tenant, &row)?;
            Ok::<_, StoreError>(setting(tx.conn()))
        })
        .unwrap();
    assert_eq!(within, "off", "the challenge's transaction commits without waiting for the flush");
    let after = db.read_blocking(|tx| Ok::<_, StoreError>(setting(tx.conn()))).unwrap();
    assert_eq!(after, "on", "and only that transaction");
    assert_eq!(db.read_blocking(|tx| crate::challenges::count(tx)).unwrap(), 1, "stored");
}

#[test]
fn audit_events_restored_from_another_cluster_are_followed_as_old_ones() {
    let Some(t) = test_db() else { return };
    drop(PgDb::open(&t.settings).unwrap());
    // As a dump of a cluster whose transaction ids ran ahead of this one's leaves them.
    t.client()
        .batch_execute(
            "INSERT INTO audit (at, tenant, actor, action, outcome, txid)
             VALUES (10, 'a', 'admin', 'restored', 'success', '4000000000')",
        )
        .unwrap();
    let db = crate::Db::open_postgres(&t.settings).unwrap();
    let txid: String = t.client().query_one("SELECT txid::text FROM audit", &[]).unwrap().get(0);
    assert_eq!(txid, "0", "taken for older than anything written here");
    let filter = crate::audit::Filter { limit: 10, ..Default::default() };
    let shown = db.read_blocking(|tx| crate::audit::follow(tx, &filter, crate::audit::Cursor::default())).unwrap();
    assert_eq!(shown.len(), 1, "a follow shows it");
}

#[test]
fn follow_misses_no_event_committed_late_here() {
    let Some(t) = test_db() else { return };
    let db = crate::Db::open_postgres(&t.settings).unwrap();
    crate::audit::tests::follow_misses_no_event_committed_late(&db, |_| {
        // Another node's audit batch: its row gets an id now and commits later.
        let mut client = t.client();
        client.batch_execute(
            "BEGIN; INSERT INTO audit (at, tenant, actor, action, outcome) VALUES (20, 'a', 'admin', 'held', 'success')",
        )
        .unwrap();
        Box::new(move || client.batch_execute("COMMIT").unwrap())
    });
}

#[test]
fn a_server_that_cannot_serve_now_is_unavailable_not_a_statement_error() {
    for code in ["08006", "57P01", "53300", "53100", "25006", "57014", "55P03", "58030"] {
        assert!(is_unavailable_code(code), "{code}");
    }
    for code in ["23505", "42P01", "40001", "22P02"] {
        assert!(!is_unavailable_code(code), "{code}: the statement's own failure");
    }
    let Some(t) = test_db() else { return };
    let db = PgDb::open(&t.settings).unwrap();
    // A lock held past the session's 10 s lock timeout (a stuck migration, an operator's open
    // transaction): the write gives up as unavailable, and succeeds once the lock is gone. (A
    // standby's 25006 cannot be had from one server here: writes start READ WRITE.)
    let mut admin = t.client();
    let mut holder = admin.transaction().unwrap();
    holder.batch_execute("LOCK TABLE tenants IN ACCESS EXCLUSIVE MODE").unwrap();
    let refused = db.write_blocking(|tx| insert_tenant(tx, "acme"));
    assert!(matches!(&refused, Err(StoreError::Unavailable(m)) if m.contains("lock timeout")), "{refused:?}");
    holder.rollback().unwrap();
    assert_eq!(db.write_blocking(|tx| insert_tenant(tx, "acme")).unwrap(), 1);
}
