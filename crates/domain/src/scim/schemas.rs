//! The discovery documents (RFC 7644 §4): `ServiceProviderConfig`, `ResourceTypes`, `Schemas`.

use serde_json::{Value, json};

use super::patch::ENTERPRISE;
use super::{GROUP_SCHEMA, MAX_PAGE, USER_SCHEMA};

const SPC_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
const RT_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
const SCHEMA_SCHEMA: &str = "urn:ietf:params:scim:schemas:core:2.0:Schema";

pub fn service_provider_config(base: &str) -> Value {
    json!({
        "schemas": [SPC_SCHEMA],
        "documentationUri": "https://example.invalid/latchkey/docs/scim.md",
        "patch": {"supported": true},
        "bulk": {"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
        "filter": {"supported": true, "maxResults": MAX_PAGE},
        "changePassword": {"supported": false},
        "sort": {"supported": false},
        "etag": {"supported": true},
        "authenticationSchemes": [{
            "type": "oauthbearertoken",
            "name": "Bearer token",
            "description": "The tenant's SCIM token (latchkey scim enable), in Authorization: Bearer",
            "primary": true,
        }],
        "meta": {"resourceType": "ServiceProviderConfig", "location": format!("{base}/scim/v2/ServiceProviderConfig")},
    })
}

fn resource_type(base: &str, name: &str, endpoint: &str, schema: &str, extensions: Value) -> Value {
    json!({
        "schemas": [RT_SCHEMA],
        "id": name,
        "name": name,
        "endpoint": endpoint,
        "description": name,
        "schema": schema,
        "schemaExtensions": extensions,
        "meta": {"resourceType": "ResourceType", "location": format!("{base}/scim/v2/ResourceTypes/{name}")},
    })
}

pub fn resource_types(base: &str) -> Vec<Value> {
    vec![
        resource_type(base, "User", "/Users", USER_SCHEMA, json!([{"schema": ENTERPRISE, "required": false}])),
        resource_type(base, "Group", "/Groups", GROUP_SCHEMA, json!([])),
    ]
}

/// One attribute's description (RFC 7643 §7).
fn attr(name: &str, kind: &str, multi: bool, required: bool, mutability: &str, uniqueness: &str) -> Value {
    json!({
        "name": name,
        "type": kind,
        "multiValued": multi,
        "description": name,
        "required": required,
        "caseExact": name == "id" || name == "externalId",
        "mutability": mutability,
        "returned": "default",
        "uniqueness": uniqueness,
    })
}

fn string(name: &str) -> Value {
    attr(name, "string", false, false, "readWrite", "none")
}

/// A string with canonical values.
fn canonical(name: &str, values: &[&str]) -> Value {
    let mut a = string(name);
    a["canonicalValues"] = json!(values);
    a
}

fn complex(name: &str, multi: bool, subs: Vec<Value>) -> Value {
    let mut a = attr(name, "complex", multi, false, "readWrite", "none");
    a["subAttributes"] = Value::Array(subs);
    a
}

/// A reference to resources of these types (`User`, `Group`) or `external`.
fn reference(name: &str, mutability: &str, types: &[&str]) -> Value {
    let mut a = attr(name, "reference", false, false, mutability, "none");
    a["referenceTypes"] = json!(types);
    a
}

fn multi(name: &str) -> Value {
    complex(
        name,
        true,
        vec![
            string("value"),
            string("display"),
            string("type"),
            attr("primary", "boolean", false, false, "readWrite", "none"),
        ],
    )
}

fn schema(base: &str, id: &str, name: &str, attributes: Vec<Value>) -> Value {
    json!({
        "schemas": [SCHEMA_SCHEMA],
        "id": id,
        "name": name,
        "description": name,
        "attributes": attributes,
        "meta": {"resourceType": "Schema", "location": format!("{base}/scim/v2/Schemas/{id}")},
    })
}

pub fn schemas(base: &str) -> Vec<Value> {
    let mut user_name = attr("userName", "string", false, true, "readWrite", "server");
    user_name["caseExact"] = json!(false);
    let mut groups = complex(
        "groups",
        true,
        vec![string("value"), reference("$ref", "readOnly", &["User", "Group"]), string("display"), string("type")],
    );
    groups["mutability"] = json!("readOnly");
    // Latchkey's users have an e-mail: `emails` (with a value) is required.
    let mut emails = multi("emails");
    emails["required"] = json!(true);
    emails["subAttributes"][0]["required"] = json!(true);
    let user = vec![
        user_name,
        complex(
            "name",
            false,
            vec![
                string("formatted"),
                string("familyName"),
                string("givenName"),
                string("middleName"),
                string("honorificPrefix"),
                string("honorificSuffix"),
            ],
        ),
        string("displayName"),
        string("nickName"),
        reference("profileUrl", "readWrite", &["external"]),
        string("title"),
        string("userType"),
        string("preferredLanguage"),
        string("locale"),
        string("timezone"),
        attr("active", "boolean", false, false, "readWrite", "none"),
        emails,
        multi("phoneNumbers"),
        multi("ims"),
        multi("photos"),
        complex(
            "addresses",
            true,
            vec![
                string("formatted"),
                string("streetAddress"),
                string("locality"),
                string("region"),
                string("postalCode"),
                string("country"),
                string("type"),
                attr("primary", "boolean", false, false, "readWrite", "none"),
            ],
        ),
        groups,
        multi("entitlements"),
        multi("roles"),
        multi("x509Certificates"),
    ];
    let mut members = complex(
        "members",
        true,
        vec![
            string("value"),
            reference("$ref", "immutable", &["User", "Group"]),
            canonical("type", &["User", "Group"]),
        ],
    );
    members["mutability"] = json!("readWrite");
    let mut display = attr("displayName", "string", false, true, "readWrite", "server");
    display["caseExact"] = json!(false);
    let group = vec![display, members];
    let enterprise = vec![
        string("employeeNumber"),
        string("costCenter"),
        string("organization"),
        string("division"),
        string("department"),
        complex(
            "manager",
            false,
            vec![string("value"), reference("$ref", "readWrite", &["User"]), string("displayName")],
        ),
    ];
    vec![
        schema(base, USER_SCHEMA, "User", user),
        schema(base, GROUP_SCHEMA, "Group", group),
        schema(base, ENTERPRISE, "EnterpriseUser", enterprise),
    ]
}
