//! A tenant's brand on its pages (`latchkey tenant brand`): the name people see, the accent
//! colour of buttons and links, and the pages' language when the browser names none that
//! Latchkey speaks. Every part is checked before anything is stored; `none` clears one.

use latchkey::admin::{BrandTenant, Tenant};
use latchkey::codes;

use crate::error::Error;
use crate::i18n::Locale;
use crate::logo;
use crate::state::State;
use crate::store::tenants::Brand;
use crate::store::{self};
use crate::tenants::require;

/// The minimum contrast of the accent against white (WCAG 2.2 AA for normal text, 1.4.3): the
/// accent is the background of white button labels and the colour of links on a light page.
pub const MIN_CONTRAST: f64 = 4.5;

fn bad(message: String) -> Error {
    Error::invalid(codes::INVALID_INPUT, message)
}

/// `#rrggbb` (or `#rgb`), lower-case, if it is a colour.
fn parse_color(text: &str) -> Option<(String, [u8; 3])> {
    let hex = text.trim().strip_prefix('#')?;
    let full: String = match hex.len() {
        3 => hex.chars().flat_map(|c| [c, c]).collect(),
        6 => hex.to_owned(),
        _ => return None,
    };
    let byte = |i: usize| u8::from_str_radix(full.get(i..i + 2)?, 16).ok();
    let rgb = [byte(0)?, byte(2)?, byte(4)?];
    Some((format!("#{}", full.to_ascii_lowercase()), rgb))
}

/// Relative luminance (WCAG 2.2, "relative luminance").
fn luminance([r, g, b]: [u8; 3]) -> f64 {
    let channel = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    };
    0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}

/// The contrast ratio of a colour against white, from 1 to 21.
pub fn contrast_with_white(rgb: [u8; 3]) -> f64 {
    1.05 / (luminance(rgb) + 0.05)
}

/// The brand `req` makes of `cur`: each part given replaces the current one (`none` clears it).
/// The logo is not a part of it: [`set`] checks and stores it beside.
pub fn changed(cur: &Brand, req: &BrandTenant) -> Result<Brand, Error> {
    let cleared = |v: &Option<String>| v.as_deref().map(|v| v.trim() != "none");
    let mut brand = cur.clone();
    match (cleared(&req.display_name), req.display_name.as_deref().map(str::trim)) {
        (Some(false), _) => brand.display_name = None,
        (Some(true), Some(name)) => {
            if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
                return Err(bad("display_name must be 1-100 printable characters".into()));
            }
            brand.display_name = Some(name.to_owned());
        }
        _ => {}
    }
    match (cleared(&req.color), req.color.as_deref()) {
        (Some(false), _) => brand.accent_color = None,
        (Some(true), Some(text)) => {
            let shown: String = text.chars().take(16).collect();
            let (hex, rgb) =
                parse_color(text).ok_or_else(|| bad(format!("color {shown:?} is not a colour like #1f4fbf")))?;
            let ratio = contrast_with_white(rgb);
            if ratio < MIN_CONTRAST {
                return Err(bad(format!(
                    "color {hex} has a contrast of {ratio:.2}:1 against white, below the {MIN_CONTRAST}:1 WCAG AA \
                     asks for the text of buttons and links; choose a darker colour"
                )));
            }
            brand.accent_color = Some(hex);
        }
        _ => {}
    }
    match (cleared(&req.default_locale), req.default_locale.as_deref()) {
        (Some(false), _) => brand.default_locale = None,
        (Some(true), Some(tag)) => {
            let shown: String = tag.chars().take(32).collect();
            let locale = Locale::parse(tag).ok_or_else(|| {
                bad(format!("default_locale {shown:?} is not one Latchkey speaks: en, de, fr, es, pt-BR, ja or zh-CN"))
            })?;
            brand.default_locale = Some(locale.tag().to_owned());
        }
        _ => {}
    }
    Ok(brand)
}

/// Changes a tenant's brand; every node's pages show it at once.
pub async fn set(state: &State, slug: String, req: BrandTenant) -> Result<Tenant, Error> {
    if req.display_name.is_none() && req.color.is_none() && req.default_locale.is_none() && req.logo.is_none() {
        return Err(bad("nothing to change: give a display name, a colour, a default locale or a logo".into()));
    }
    // `Some(None)`: remove the logo.
    let logo = match req.logo.as_deref().map(str::trim) {
        None => None,
        Some("none") => Some(None),
        Some(b64) => Some(Some(logo::check(b64, logo::Formats::PngOrSvg)?)),
    };
    let slug = state
        .db
        .write(move |tx| -> Result<String, Error> {
            crate::store::cluster::admin_lock(tx)?;
            let cur = require(tx, &slug)?;
            let mut brand = changed(&cur.brand, &req)?;
            if let Some(logo) = &logo {
                brand.logo_sha = logo.as_ref().map(|l| l.sha.clone());
                store::tenants::put_logo(tx, cur.id, logo.as_ref().map(|l| (l.content_type, l.bytes.as_slice())))?;
            }
            store::tenants::set_brand(tx, cur.id, &brand)?;
            Ok(cur.slug)
        })
        .await?;
    state.registry.publish(&slug).await?;
    crate::tenants::show(&state.db, slug).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(display_name: Option<&str>, color: Option<&str>, locale: Option<&str>) -> BrandTenant {
        BrandTenant {
            display_name: display_name.map(str::to_owned),
            color: color.map(str::to_owned),
            default_locale: locale.map(str::to_owned),
            logo: None,
        }
    }

    #[test]
    fn contrast_follows_wcag() {
        assert!((contrast_with_white([0, 0, 0]) - 21.0).abs() < 1e-9);
        assert!((contrast_with_white([255, 255, 255]) - 1.0).abs() < 1e-9);
        // The default accent passes; a light yellow does not.
        assert!(contrast_with_white([0x24, 0x59, 0xd6]) > 5.0);
        assert!(contrast_with_white([0xff, 0xd7, 0x00]) < 2.0);
        assert_eq!(parse_color("#ABC").map(|(h, _)| h), Some("#aabbcc".to_owned()));
        assert_eq!(parse_color("red"), None);
        assert_eq!(parse_color("#12345g"), None);
    }

    #[test]
    fn each_part_is_checked_replaced_or_cleared() {
        let b = changed(&Brand::default(), &req(Some(" Acme Login "), Some("#0B5FFF"), Some("de-CH"))).unwrap();
        assert_eq!(
            b,
            Brand {
                display_name: Some("Acme Login".into()),
                accent_color: Some("#0b5fff".into()),
                default_locale: Some("de".into()),
                logo_sha: None,
            }
        );
        let kept = changed(&b, &req(None, Some("none"), None)).unwrap();
        assert_eq!((kept.display_name.as_deref(), kept.accent_color), (Some("Acme Login"), None));
        for bad in [
            req(Some(""), None, None),
            req(None, Some("#ffd700"), None),
            req(None, Some("blue"), None),
            req(None, None, Some("tlh")),
        ] {
            assert_eq!(changed(&b, &bad).err().map(|e| e.code), Some(codes::INVALID_INPUT));
        }
        let msg = changed(&b, &req(None, Some("#ffd700"), None)).err().unwrap().message;
        assert!(msg.contains("4.5:1") && msg.contains("darker"), "{msg}");
    }
}
