//! The in-memory registry of tenants: it routes requests to tenants and holds what each serves on
//! hot paths (parsed signing key, pre-serialised JWKS and discovery bytes). It is rebuilt for one
//! tenant whenever that tenant's keys or settings change ([`Registry::refresh`]).
//!
//! At start only the tenants' rows are read: with ten thousand tenants, unsealing and parsing
//! every signing key would cost seconds and most of the memory. A tenant's keys, relying party
//! and documents ([`Hot`]) are built on its first request and kept.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use bytes::Bytes;
use latchkey::admin::Registration;
use latchkey::codes;
use url::Url;

use crate::clock::Timestamp;
use crate::config::RsaEngine;
use crate::crypto::{Kek, SessionIds};
use crate::error::{Error, Kind};
use crate::oidc::discovery;
use crate::oidc::keys::{Jwk, Jwks, SigningKey};
use crate::store::keys::KeyRow;
use crate::store::tenants::TenantRow;
use crate::store::{self, Db, KeyState, SigningAlg, StoreError, TenantId};
use crate::urls;

/// What the daemon keeps in memory for one tenant.
#[derive(Debug)]
pub struct TenantRuntime {
    pub id: TenantId,
    pub slug: String,
    pub name: String,
    /// Issuer; no trailing slash.
    pub base_url: String,
    pub base: Url,
    /// `scheme://host[:port]`, the only WebAuthn origin of the tenant.
    pub origin: String,
    pub rp_id: String,
    pub registration: Registration,
    /// Which authenticators may register (`tenant update --attestation-policy`).
    pub attestation: crate::store::tenants::Attestation,
    /// The name its pages show: the brand's display name, else the tenant's name.
    pub display_name: String,
    /// The brand's accent colour (`#rrggbb`), if set: served as `/brand.css`.
    pub accent_color: Option<String>,
    /// The pages' language when the browser names none shipped.
    pub default_locale: crate::i18n::Locale,
    /// Hex SHA-256 of the brand's logo, if it has one: served as `/logo`.
    pub logo_sha: Option<String>,
    /// `host[:port]` for routing.
    authority: String,
    /// Path prefix without trailing slash; empty when the tenant owns a whole host.
    pub path_prefix: String,
    /// The tenant lives under the daemon's public URL (not a custom domain).
    under_public_url: bool,
    /// On a host other than the public URL's: the tenant's own domain.
    own_domain: bool,
    /// On the public URL's host but not under its path (or on another port): reached by no
    /// request to the public URL, which start-up warns about.
    outside_public_url: bool,
    /// URLs the tenant moved away from, answering until their time ([`Registry::moved`]).
    pub old_urls: Vec<OldUrl>,
    /// Built on the tenant's first request ([`TenantRuntime::load`]), or at once after a change.
    hot: OnceLock<Arc<Hot>>,
}

/// A URL a tenant had, still answering: 308 to the tenant's URL, or its JWKS.
#[derive(Debug, Clone)]
pub struct OldUrl {
    pub base_url: String,
    /// Until when (Unix seconds).
    pub until: Timestamp,
    authority: String,
    path_prefix: String,
    under_public_url: bool,
}

impl OldUrl {
    fn new(base_url: &str, until: Timestamp, public_url: &str) -> Result<OldUrl, Error> {
        let base = Url::parse(base_url).map_err(|e| Error::internal(format!("stored old base_url: {e}")))?;
        Ok(OldUrl {
            base_url: base_url.to_owned(),
            until,
            authority: urls::authority(&base),
            path_prefix: base.path().trim_end_matches('/').to_owned(),
            under_public_url: base_url.starts_with(&format!("{public_url}/")),
        })
    }
}

/// What signing, verifying and ceremonies need: costly to build, so built once per tenant.
#[derive(Debug)]
pub struct Hot {
    /// The current RS256 key. None while the tenant's first key is being generated (a tenant is
    /// created without waiting for one: [`crate::oidc::keygen`]); nothing signs until it exists.
    pub signer: Option<SigningKey>,
    /// The current ES256 and EdDSA keys, of the tenants that added them (`key rotate --alg`).
    pub others: Vec<SigningKey>,
    /// The tenant's relying party (RP id and origin), or why there is none: an RP ID that is an
    /// IP address (a tenant at `http://127.0.0.1/...`), which WebAuthn does not allow. Such a
    /// tenant serves everything else (discovery, tokens, social login); its passkey ceremonies
    /// answer `invalid_rp_id` ([`Hot::relying_party`]).
    webauthn: Result<webauthn_rs::prelude::Webauthn, String>,
    /// Every published key by kid, parsed for verifying this tenant's own tokens, with the one
    /// algorithm it verifies.
    pub decoding: HashMap<String, (jsonwebtoken::Algorithm, jsonwebtoken::DecodingKey)>,
    pub jwks_json: Bytes,
    pub discovery_json: Bytes,
    /// Names sessions in ID tokens (`sid`).
    pub session_ids: SessionIds,
}

impl Hot {
    /// The relying party for a ceremony; `invalid_rp_id` for a tenant whose RP ID is an IP address.
    pub fn relying_party(&self) -> Result<&webauthn_rs::prelude::Webauthn, Error> {
        self.webauthn.as_ref().map_err(|why| Error::invalid(codes::INVALID_RP_ID, why.clone()))
    }

    /// The current RS256 key, if made yet.
    pub fn rs256(&self) -> Option<&SigningKey> {
        self.signer.as_ref()
    }

    /// The tenant's current key of `alg`. Never another algorithm's: an app whose algorithm's key
    /// is gone (not expected: the current key of an algorithm cannot be retired) gets an error;
    /// RS256 while the tenant's first key is being made, `unavailable`.
    pub fn signing_key(&self, alg: SigningAlg) -> Result<&SigningKey, Error> {
        if alg == SigningAlg::RS256 {
            return self.signer.as_ref().ok_or_else(|| {
                Error::new(
                    Kind::Unavailable,
                    codes::UNAVAILABLE,
                    "the tenant's first signing key is still being generated; try again in a moment",
                )
            });
        }
        self.others.iter().find(|k| k.alg == alg).ok_or_else(|| {
            Error::internal(format!(
                "the tenant has no current {alg} signing key for an app that signs with {alg}; `latchkey key rotate \
                 --alg {alg}` makes one"
            ))
        })
    }

    fn build(
        row: &TenantRow,
        origin: &str,
        keys: Vec<(KeyState, SigningKey)>,
        session_ids: SessionIds,
    ) -> Result<Hot, Error> {
        let mut signer = None;
        let mut others: Vec<SigningKey> = vec![];
        let mut retired: Vec<SigningKey> = vec![];
        for (state, key) in keys {
            let current = state == KeyState::Current;
            if current && key.alg == SigningAlg::RS256 && signer.is_none() {
                signer = Some(key);
            } else if current && key.alg != SigningAlg::RS256 && !others.iter().any(|o| o.alg == key.alg) {
                others.push(key);
            } else {
                retired.push(key);
            }
        }
        // The current key is prepared for the pair signer now (about 1 ms, when the engine is
        // `ifma-pairs` on a CPU with AVX-512 IFMA; nothing with aws-lc), not on a token request;
        // the retired ones only verify, so their DER goes.
        if let Some(s) = &signer {
            let _ = s.ifma();
        }
        retired.iter().for_each(SigningKey::forget_pkcs8);
        // The RS256 key first: relying parties that take the first key keep working. A tenant
        // whose first key is not made yet lists the keys it has (none, or ES256/EdDSA ones).
        let mut published: Vec<&Jwk> = signer.iter().map(|k| &k.jwk).collect();
        published.extend(others.iter().map(|k| &k.jwk));
        published.extend(retired.iter().map(|k| &k.jwk));
        let decoding = published
            .iter()
            .map(|k| k.decoding().map(|d| (k.kid.clone(), d)))
            .collect::<Result<HashMap<_, _>, _>>()
            .map_err(Error::internal)?;
        let jwks_json = serde_json::to_vec(&Jwks { keys: published }).map_err(Error::internal)?;
        let discovery_json = serde_json::to_vec(&discovery::metadata(&row.base_url)).map_err(Error::internal)?;
        // An IP address is told apart before webauthn-rs is asked, which would refuse it too,
        // but with an error-level log line of its own.
        let webauthn = if row.rp_id.parse::<std::net::IpAddr>().is_ok() {
            Err(format!(
                "tenant {:?} has the RP ID {:?}, an IP address, and WebAuthn needs a domain name: passkeys cannot be \
                 used here. Create the tenant at http://localhost:PORT/... (or a domain) instead",
                row.slug, row.rp_id
            ))
        } else {
            Ok(crate::webauthn::relying_party(&row.rp_id, origin, &row.name).map_err(Error::internal)?)
        };
        Ok(Hot {
            signer,
            others,
            webauthn,
            decoding,
            jwks_json: Bytes::from(jwks_json),
            discovery_json: Bytes::from(discovery_json),
            session_ids,
        })
    }
}

impl TenantRuntime {
    /// The tenant with its keys loaded (after a change, and for the fuzz targets).
    pub fn build(
        row: &TenantRow,
        keys: Vec<(KeyState, SigningKey)>,
        public_url: &str,
        session_ids: SessionIds,
    ) -> Result<TenantRuntime, Error> {
        let t = TenantRuntime::routing(row, public_url)?;
        let hot = Hot::build(row, &t.origin, keys, session_ids)?;
        let _ = t.hot.set(Arc::new(hot));
        Ok(t)
    }

    /// The tenant as routing needs it, keys not loaded: what start-up builds for every tenant.
    pub fn routing(row: &TenantRow, public_url: &str) -> Result<TenantRuntime, Error> {
        let base = Url::parse(&row.base_url).map_err(|e| Error::internal(format!("stored base_url: {e}")))?;
        let origin = base.origin().ascii_serialization();
        let public = Url::parse(public_url).ok();
        let under_public_url = row.base_url.starts_with(&format!("{public_url}/"));
        Ok(TenantRuntime {
            id: row.id,
            slug: row.slug.clone(),
            name: row.name.clone(),
            base_url: row.base_url.clone(),
            origin,
            rp_id: row.rp_id.clone(),
            registration: row.registration,
            attestation: row.attestation.clone(),
            display_name: row.brand.display_name.clone().unwrap_or_else(|| row.name.clone()),
            accent_color: row.brand.accent_color.clone(),
            logo_sha: row.brand.logo_sha.clone(),
            default_locale: row
                .brand
                .default_locale
                .as_deref()
                .and_then(crate::i18n::Locale::parse)
                .unwrap_or_default(),
            authority: urls::authority(&base),
            path_prefix: base.path().trim_end_matches('/').to_owned(),
            under_public_url,
            own_domain: public.as_ref().map(urls::authority) != Some(urls::authority(&base)),
            outside_public_url: !under_public_url
                && public.as_ref().and_then(|p| p.host_str().map(str::to_ascii_lowercase))
                    == base.host_str().map(str::to_ascii_lowercase),
            old_urls: vec![],
            base,
            hot: OnceLock::new(),
        })
    }

    /// With the URLs it moved away from that still answer.
    fn with_old_urls(mut self, old: &[(String, Timestamp)], public_url: &str) -> Result<TenantRuntime, Error> {
        self.old_urls = old.iter().map(|(u, until)| OldUrl::new(u, *until, public_url)).collect::<Result<_, _>>()?;
        Ok(self)
    }

    /// On the public URL's host but outside its path (another port, another prefix): requests to
    /// the public URL never reach it, as after a restore on another port. Start-up warns.
    pub fn outside_public_url(&self) -> bool {
        self.outside_public_url
    }

    /// The tenant's keys, relying party and documents; loaded by [`TenantRuntime::load`] before
    /// any handler runs, so an error here is a bug, not a state.
    pub fn hot(&self) -> Result<&Hot, Error> {
        self.hot.get().map(Arc::as_ref).ok_or_else(|| Error::internal(format!("tenant {} is not loaded", self.slug)))
    }

    /// [`TenantRuntime::hot`], shared: for work that outlives the borrow (a signature parked for a
    /// partner, [`crate::oidc::signer`]).
    pub fn hot_shared(&self) -> Result<Arc<Hot>, Error> {
        self.hot.get().cloned().ok_or_else(|| Error::internal(format!("tenant {} is not loaded", self.slug)))
    }

    /// Loads the keys on the tenant's first request: reads and unseals them, parses them and
    /// builds the documents. Two first requests at once both build; one result is kept.
    pub async fn load(&self, registry: &Registry) -> Result<&Hot, Error> {
        if let Some(hot) = self.hot.get() {
            return Ok(hot);
        }
        let (id, slug) = (self.id, self.slug.clone());
        let loader = &registry.loader;
        let (row, key_rows) = loader
            .db
            .read(move |tx| -> Result<_, Error> {
                // By id and slug: a tenant deleted meanwhile (whose id SQLite may give to a new
                // one) must not be served another tenant's keys.
                let row = store::tenants::by_id(tx, id)?.filter(|r| r.slug == slug).ok_or_else(|| not_found(&slug))?;
                let keys = store::keys::list(tx, id)?;
                Ok((row, keys))
            })
            .await?;
        let keys = unseal(&loader.kek, &row, &key_rows, loader.engine)?;
        let hot = Hot::build(&row, &self.origin, keys, loader.kek.session_ids())?;
        let _ = self.hot.set(Arc::new(hot));
        self.hot()
    }
}

/// The routing maps. Changed in place, one tenant at a time, so that creating a tenant costs the
/// same with ten or ten thousand others.
#[derive(Debug, Default)]
struct Maps {
    by_slug: HashMap<String, Arc<TenantRuntime>>,
    /// `authority` + `path_prefix` → tenant: routing by `Host` and path.
    by_address: HashMap<String, Arc<TenantRuntime>>,
    /// `path_prefix` → tenant, for tenants under the daemon's public URL (routed by path alone
    /// when a proxy rewrites `Host`).
    by_prefix: HashMap<String, Arc<TenantRuntime>>,
    /// Hosts (authorities) of tenants on a domain of their own (not the public URL's host), with
    /// how many tenants each: a request to one of them is never routed by path alone, so that
    /// the tenants under the public URL do not appear on a customer's domain (same-origin with
    /// its pages).
    custom_hosts: HashMap<String, usize>,
    /// Old URLs (`authority` + `path_prefix`) → the tenant that moved away, and until when.
    moved_by_address: HashMap<String, (Arc<TenantRuntime>, Timestamp)>,
    /// Old URLs under the public URL by `path_prefix` alone.
    moved_by_prefix: HashMap<String, (Arc<TenantRuntime>, Timestamp)>,
    /// The most path segments any tenant's prefix has had: how many prefixes of a path to try.
    depth: usize,
}

impl Maps {
    fn put(&mut self, t: Arc<TenantRuntime>) {
        self.remove(&t.slug);
        self.by_address.insert(format!("{}{}", t.authority, t.path_prefix), t.clone());
        if t.under_public_url {
            self.by_prefix.insert(t.path_prefix.clone(), t.clone());
        }
        if t.own_domain {
            *self.custom_hosts.entry(t.authority.clone()).or_default() += 1;
        }
        self.depth = self.depth.max(t.path_prefix.matches('/').count());
        for old in &t.old_urls {
            self.moved_by_address.insert(format!("{}{}", old.authority, old.path_prefix), (t.clone(), old.until));
            if old.under_public_url {
                self.moved_by_prefix.insert(old.path_prefix.clone(), (t.clone(), old.until));
            }
            self.depth = self.depth.max(old.path_prefix.matches('/').count());
        }
        self.by_slug.insert(t.slug.clone(), t);
    }

    fn remove(&mut self, slug: &str) {
        if let Some(old) = self.by_slug.remove(slug) {
            self.by_address.remove(&format!("{}{}", old.authority, old.path_prefix));
            if old.under_public_url {
                self.by_prefix.remove(&old.path_prefix);
            }
            for url in &old.old_urls {
                self.moved_by_address.remove(&format!("{}{}", url.authority, url.path_prefix));
                if url.under_public_url {
                    self.moved_by_prefix.remove(&url.path_prefix);
                }
            }
            if old.own_domain
                && let Some(n) = self.custom_hosts.get_mut(&old.authority)
            {
                *n -= 1;
                if *n == 0 {
                    self.custom_hosts.remove(&old.authority);
                }
            }
        }
    }
}

/// A `Host` header as authorities are stored: lowercase, without a default port (a client may
/// name one; stored authorities leave it out).
fn stored_authority(host: &str) -> String {
    let h = host.to_ascii_lowercase();
    match h.strip_suffix(":443").or_else(|| h.strip_suffix(":80")) {
        Some(bare) => bare.to_owned(),
        None => h,
    }
}

/// The prefixes of `path` that end at a segment boundary, longest first, at most `depth`
/// segments deep, each with the rest of the path below it (always starting with `/`).
fn prefixes(path: &str, depth: usize) -> impl Iterator<Item = (&str, String)> {
    let mut ends: Vec<usize> = path.match_indices('/').map(|(i, _)| i).skip(1).take(depth).collect();
    if path.matches('/').count() <= depth && path.len() > 1 && !path.ends_with('/') {
        ends.push(path.len());
    }
    ends.push(0);
    ends.sort_unstable_by(|a, b| b.cmp(a));
    ends.dedup();
    ends.into_iter().map(move |end| {
        let rest = &path[end..];
        (&path[..end], if rest.is_empty() { "/".to_owned() } else { rest.to_owned() })
    })
}

/// What the registry needs to load a tenant: the store, the key that unseals signing keys, the
/// daemon's public URL (which tenants live under it) and the engine the keys are loaded for.
#[derive(Debug)]
pub struct Loader {
    pub db: Db,
    pub kek: Arc<Kek>,
    pub public_url: String,
    pub engine: RsaEngine,
}

#[derive(Debug)]
pub struct Registry {
    loader: Loader,
    inner: RwLock<Maps>,
    /// Held by [`Registry::refresh`] from its read to its put. Two refreshes of a tenant could
    /// otherwise interleave (on PostgreSQL the change listener's and a key rotation's own), and
    /// the one that read first, put last, would serve a state older than the database's: a
    /// rotated tenant's JWKS with the old key still first.
    refreshing: tokio::sync::Mutex<()>,
}

impl Registry {
    /// An empty registry; [`Registry::load_all`] fills it at start.
    pub fn new(loader: Loader) -> Registry {
        Registry { loader, inner: RwLock::default(), refreshing: tokio::sync::Mutex::default() }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Maps> {
        self.inner.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Maps> {
        self.inner.write().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn get(&self, slug: &str) -> Option<Arc<TenantRuntime>> {
        self.read().by_slug.get(slug).cloned()
    }

    pub fn len(&self) -> usize {
        self.read().by_slug.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `host` (a `Host` header) is the domain of a tenant of its own (not the public URL).
    pub fn is_own_domain(&self, host: &str) -> bool {
        self.read().custom_hosts.contains_key(&stored_authority(host))
    }

    /// Finds the tenant for a request: first by `Host` and path prefix; then, for tenants under
    /// the daemon's own public URL, by path prefix alone (a reverse proxy may rewrite `Host`).
    /// Returns the tenant and the path below its prefix (always starting with `/`).
    pub fn resolve(&self, host: Option<&str>, path: &str) -> Option<(Arc<TenantRuntime>, String)> {
        // Hash lookups of the path's prefixes, longest first: the cost follows the path's depth,
        // not the number of tenants.
        let snap = self.read();
        if !path.starts_with('/') {
            return None;
        }
        if let Some(h) = host {
            let h = stored_authority(h);
            for (prefix, rest) in prefixes(path, snap.depth) {
                if let Some(t) = snap.by_address.get(&format!("{h}{prefix}")) {
                    return Some((t.clone(), rest));
                }
            }
            if snap.custom_hosts.contains_key(&h) {
                return None;
            }
        }
        prefixes(path, snap.depth).find_map(|(prefix, rest)| snap.by_prefix.get(prefix).map(|t| (t.clone(), rest)))
    }

    /// Finds the tenant that moved away from the URL of a request no tenant answers (see
    /// [`Registry::resolve`] for the order), while that old URL still answers at `now`. Returns the
    /// tenant and the path below the old prefix.
    pub fn moved(&self, host: Option<&str>, path: &str, now: Timestamp) -> Option<(Arc<TenantRuntime>, String)> {
        let snap = self.read();
        if !path.starts_with('/') || snap.moved_by_address.is_empty() {
            return None;
        }
        let live = |(t, until): &(Arc<TenantRuntime>, Timestamp)| (*until > now).then(|| t.clone());
        if let Some(h) = host {
            let h = stored_authority(h);
            for (prefix, rest) in prefixes(path, snap.depth) {
                if let Some(t) = snap.moved_by_address.get(&format!("{h}{prefix}")).and_then(live) {
                    return Some((t, rest));
                }
            }
            if snap.custom_hosts.contains_key(&h) {
                return None;
            }
        }
        prefixes(path, snap.depth)
            .find_map(|(prefix, rest)| snap.moved_by_prefix.get(prefix).and_then(live).map(|t| (t, rest)))
    }

    /// Reloads one tenant here, then waits until the other nodes serve the change too (see
    /// [`crate::store::Db::wait_published`]): the end of every admin change to a tenant or its keys.
    pub async fn publish(&self, slug: &str) -> Result<(), Error> {
        self.refresh(slug).await?;
        self.loader.db.wait_published().await;
        Ok(())
    }

    /// Reloads one tenant from the database (after creation, rotation, or a settings change). A
    /// tenant whose keys were loaded has them loaded again at once; any other (a new one, one
    /// not asked for since the start) is put for routing only and loads on its first request, as
    /// at start: `apply` of ten thousand tenants unseals and builds nothing.
    pub async fn refresh(&self, slug: &str) -> Result<(), Error> {
        // One at a time: each refresh reads the database after the previous one has put what it
        // read, so the last one to run leaves the newest state.
        let _one_at_a_time = self.refreshing.lock().await;
        let with_keys = self.get(slug).is_some_and(|t| t.hot.get().is_some());
        let slug_owned = slug.to_owned();
        let loader = &self.loader;
        let loaded = loader
            .db
            .read(move |tx| -> Result<_, StoreError> {
                let Some(row) = store::tenants::by_slug(tx, &slug_owned)? else {
                    return Ok(None);
                };
                let keys = if with_keys { Some(store::keys::list(tx, row.id)?) } else { None };
                let old = store::tenants::old_urls_of(tx, row.id)?;
                Ok(Some((row, keys, old)))
            })
            .await?;
        match loaded {
            None => self.write().remove(slug),
            Some((row, key_rows, old)) => {
                let rt = match key_rows {
                    Some(key_rows) => {
                        let keys = unseal(&loader.kek, &row, &key_rows, loader.engine)?;
                        TenantRuntime::build(&row, keys, &loader.public_url, loader.kek.session_ids())?
                    }
                    None => TenantRuntime::routing(&row, &loader.public_url)?,
                };
                let rt = Arc::new(rt.with_old_urls(&old, &loader.public_url)?);
                self.write().put(rt);
            }
        }
        Ok(())
    }

    /// Loads every tenant for routing; used at start-up. Keys load on each tenant's first
    /// request, but one tenant's keys (the first tenant's that has any) are unsealed here so that
    /// a wrong key-encryption key stops the daemon at start rather than at its first sign-in.
    /// Returns the change generation the tenants were read at (one snapshot): where this node's
    /// change listener starts.
    pub async fn load_all(&self) -> Result<i64, Error> {
        let Loader { db, kek, public_url, .. } = &self.loader;
        let (rows, sample, old, generation) = db
            .read(|tx| -> Result<_, StoreError> {
                let rows = store::tenants::list(tx)?;
                // A tenant with a key: the first tenants may still be waiting for theirs.
                let sample = match store::keys::first_sealed(tx)?.and_then(|id| rows.iter().find(|r| r.id == id)) {
                    Some(row) => Some((row.clone(), store::keys::list(tx, row.id)?)),
                    None => None,
                };
                let old = store::tenants::old_urls(tx)?;
                Ok((rows, sample, old, store::cluster::generation(tx)?))
            })
            .await?;
        if let Some((row, keys)) = &sample
            // Only whether the key-encryption key opens them: nothing signs with these.
            && let Err(e) = unseal(kek, row, keys, RsaEngine::AwsLc)
        {
            return Err(Error::new(
                Kind::Internal,
                codes::INTERNAL,
                format!(
                    "the key-encryption key (keys.encryption_key_file) does not open the signing keys of tenant \
                     {:?}: it is not the key this database was written with. Restore the key file that belongs \
                     to this database (from the same backup), or point the configuration at it",
                    row.slug
                ),
            )
            .caused_by(e));
        }
        let mut maps = Maps::default();
        let mut old_by_tenant: HashMap<TenantId, Vec<(String, Timestamp)>> = HashMap::new();
        for (id, url, until) in old {
            old_by_tenant.entry(id).or_default().push((url, until));
        }
        for row in &rows {
            let old = old_by_tenant.remove(&row.id).unwrap_or_default();
            maps.put(Arc::new(TenantRuntime::routing(row, public_url)?.with_old_urls(&old, public_url)?));
        }
        *self.write() = maps;
        Ok(generation)
    }

    /// The slugs of the tenants served now.
    pub fn slugs(&self) -> Vec<String> {
        self.read().by_slug.keys().cloned().collect()
    }
}

/// The error for a tenant that does not exist (any more).
pub fn not_found(slug: &str) -> Error {
    Error::new(
        Kind::NotFound,
        codes::TENANT_NOT_FOUND,
        format!("no tenant {slug:?}; `latchkey tenant list` shows the tenants"),
    )
}

fn unseal(
    kek: &Kek,
    row: &TenantRow,
    key_rows: &[KeyRow],
    engine: RsaEngine,
) -> Result<Vec<(KeyState, SigningKey)>, Error> {
    key_rows
        .iter()
        .map(|k| SigningKey::unseal(kek, row.id, k, engine).map(|key| (k.state, key)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::internal(format!("tenant {}: {e}", row.slug)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(id: i64, slug: &str, base_url: &str) -> Arc<TenantRuntime> {
        let row = TenantRow {
            id: TenantId(id),
            slug: slug.into(),
            name: slug.into(),
            base_url: base_url.into(),
            rp_id: "localhost".into(),
            registration: Registration::Invite,
            created_at: 0,
            brand: Default::default(),
            attestation: Default::default(),
        };
        Arc::new(TenantRuntime::routing(&row, "https://id.example.com").unwrap())
    }

    #[test]
    fn prefixes_end_at_segment_boundaries_longest_first() {
        fn all(p: &str, d: usize) -> Vec<(String, String)> {
            prefixes(p, d).map(|(a, b)| (a.to_owned(), b)).collect()
        }
        fn own(v: Vec<(&str, &str)>) -> Vec<(String, String)> {
            v.into_iter().map(|(a, b)| (a.to_owned(), b.to_owned())).collect()
        }
        assert_eq!(all("/acme/token", 1), own(vec![("/acme", "/token"), ("", "/acme/token")]));
        assert_eq!(all("/acme", 1), own(vec![("/acme", "/"), ("", "/acme")]));
        assert_eq!(all("/acme/", 1), own(vec![("/acme", "/"), ("", "/acme/")]));
        assert_eq!(all("/", 1), own(vec![("", "/")]));
        assert_eq!(all("/a/b/c", 0), own(vec![("", "/a/b/c")]));
        assert_eq!(all("/a/b", 2), own(vec![("/a/b", "/"), ("/a", "/b"), ("", "/a/b")]));
    }

    #[test]
    fn routing_finds_the_longest_prefix_among_ten_thousand_tenants() {
        let store = crate::store::testing::temp_db();
        let kek = Arc::new(Kek::from_bytes(&[7; 32]).unwrap());
        let loader =
            Loader { db: store.db.clone(), kek, public_url: "https://id.example.com".into(), engine: RsaEngine::AwsLc };
        let registry = Registry::new(loader);
        let mut list: Vec<Arc<TenantRuntime>> =
            (0..10_000).map(|i| tenant(i, &format!("t{i}"), &format!("https://id.example.com/t{i}"))).collect();
        list.push(tenant(10_001, "whole", "https://login.whole.test"));
        list.push(tenant(10_002, "deep", "https://login.deep.test/a/b"));
        list.push(tenant(10_003, "shallow", "https://login.deep.test/a"));
        for t in list {
            registry.write().put(t);
        }
        let at = |host: &str, path: &str| registry.resolve(Some(host), path).map(|(t, rest)| (t.slug.clone(), rest));
        assert_eq!(at("id.example.com", "/t9999/token"), Some(("t9999".into(), "/token".into())));
        assert_eq!(at("ID.EXAMPLE.COM", "/t0"), Some(("t0".into(), "/".into())));
        // A proxy that rewrites Host still reaches tenants under the public URL by path.
        assert_eq!(at("internal:8080", "/t42/jwks.json"), Some(("t42".into(), "/jwks.json".into())));
        assert_eq!(at("internal:8080", "/nobody/token"), None);
        assert_eq!(at("id.example.com", "/t42x/token"), None);
        assert_eq!(at("login.whole.test", "/anything"), Some(("whole".into(), "/anything".into())));
        // A default port named in Host is the same authority.
        assert_eq!(at("login.whole.test:443", "/anything"), Some(("whole".into(), "/anything".into())));
        assert_eq!(at("login.whole.test:8443", "/anything"), None);
        assert_eq!(at("login.deep.test", "/a/b/token"), Some(("deep".into(), "/token".into())));
        assert_eq!(at("login.deep.test", "/a/token"), Some(("shallow".into(), "/token".into())));
        // A tenant under the public URL is not served on another tenant's own domain, where it
        // would share that tenant's origin; on any other host (a proxy rewriting Host) it is.
        assert_eq!(at("login.deep.test", "/t42/token"), None);
        assert!(registry.is_own_domain("login.deep.test") && registry.is_own_domain("LOGIN.whole.test:443"));
        assert!(!registry.is_own_domain("id.example.com") && !registry.is_own_domain("login.whole.test:8443"));
        assert_eq!(at("login.whole.test:443", "/t42/token").map(|(s, _)| s), Some("whole".into()));
        assert_eq!(at("other.proxy:8080", "/t42/token").map(|(s, _)| s), Some("t42".into()));
        // Custom domains are only routed by their own host.
        assert_eq!(at("id.example.com", "/a/b/token"), None);
        assert_eq!(registry.len(), 10_003);
        registry.write().remove("deep");
        registry.write().remove("t9999");
        assert_eq!(at("login.deep.test", "/a/b/token"), Some(("shallow".into(), "/b/token".into())));
        assert_eq!(at("id.example.com", "/t9999/token"), None);
        assert_eq!(registry.len(), 10_001);
    }
}
