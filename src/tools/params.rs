//! Tool parameters: portable schemas, argument checking and aliases.
//!
//! Schemas are generated from each tool's parameter struct with `schemars`
//! and then rewritten into the small, flat subset every client accepts
//! (docs/tools.md): no `$schema`, `$ref`, `anyOf`, type arrays or `format`.
//!
//! Arguments are checked against that same schema before a tool sees them,
//! and failures are phrased like Gemini CLI's validator
//! (`params must have required property 'x'`, `params/x must be string`), so
//! a model recognises them and corrects its call. Aliases from older Gemini
//! CLI dialects are folded into the canonical names first.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use std::collections::HashMap;

use serde_json::{Map, Value};

pub type JsonObject = Map<String, Value>;

/// Keywords a published schema may contain.
const ALLOWED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "description",
    "items",
    "minimum",
    "minItems",
    "default",
    "enum",
];

/// The flat, portable input schema of `T`.
pub fn portable_schema<T: JsonSchema>() -> JsonObject {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).unwrap_or_else(|_| Value::Object(Map::new()));
    make_portable(&mut value);
    let mut object = match value {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    // A tool's input is always an object with properties, even if empty.
    object.insert("type".into(), Value::from("object"));
    object
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    object.remove("description");
    if object
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        object.remove("required");
    }
    object
}

/// Rewrites one schema node (recursively) into the portable subset.
fn make_portable(node: &mut Value) {
    let Value::Object(obj) = node else { return };

    // `allOf` merges; `anyOf`/`oneOf` lose their null branch, then either
    // collapse into the one branch left or into an `enum` of constants.
    if let Some(Value::Array(parts)) = obj.remove("allOf") {
        for part in parts {
            merge_missing(obj, part);
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = obj.remove(key) else {
            continue;
        };
        let branches: Vec<Value> = branches
            .into_iter()
            .filter(|b| !is_null_schema(b))
            .collect();
        let constants: Option<Vec<Value>> = branches
            .iter()
            .map(|b| b.get("const").or_else(|| single_enum(b)).cloned())
            .collect();
        match constants {
            Some(values) if branches.len() > 1 => {
                if let Some(kind) = branches.first().and_then(|b| b.get("type")).cloned() {
                    obj.entry("type").or_insert(kind);
                }
                obj.insert("enum".into(), Value::Array(values));
            }
            _ => {
                for branch in branches {
                    merge_missing(obj, branch);
                }
            }
        }
    }
    if let Some(constant) = obj.remove("const") {
        obj.insert("enum".into(), Value::Array(vec![constant]));
    }
    if let Some(Value::Array(types)) = obj.get("type") {
        let first = types.iter().find(|t| t.as_str() != Some("null")).cloned();
        match first {
            Some(t) => obj.insert("type".into(), t),
            None => obj.remove("type"),
        };
    }
    if obj.get("default").is_some_and(Value::is_null) {
        obj.remove("default");
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    obj.retain(|k, _| ALLOWED_KEYWORDS.contains(&k.as_str()));
    if let Some(Value::String(text)) = obj.get_mut("description") {
        *text = unwrap_doc_lines(text);
    }
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for prop in props.values_mut() {
            make_portable(prop);
        }
    }
    if let Some(items) = obj.get_mut("items") {
        make_portable(items);
    }
}

/// Doc comments arrive with their source line breaks; rejoin wrapped lines
/// (a blank line still separates paragraphs).
fn unwrap_doc_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|para| {
            para.split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn is_null_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("null")
        || v.get("const").is_some_and(Value::is_null)
}

fn single_enum(v: &Value) -> Option<&Value> {
    match v.get("enum") {
        Some(Value::Array(values)) if values.len() == 1 => values.first(),
        _ => None,
    }
}

/// Copies keys of `from` that `into` does not have yet.
fn merge_missing(into: &mut JsonObject, from: Value) {
    if let Value::Object(from) = from {
        for (k, v) in from {
            into.entry(k).or_insert(v);
        }
    }
}

/// An alternative spelling of a parameter. `from` may name a nested field
/// with dots (`file_filtering_options.respect_git_ignore`).
#[derive(Debug, Clone, Copy)]
pub struct Alias {
    pub from: &'static str,
    pub to: &'static str,
}

/// What a call's parameters are called in messages: the spelling the caller
/// used (an alias), else the name the tool list shows, else the canonical
/// name.
#[derive(Debug, Default, Clone)]
pub struct Naming {
    /// Canonical name → the alias the caller spelled it with.
    spelled: HashMap<String, String>,
    /// Canonical name → the name the advertised schema uses.
    published: HashMap<String, String>,
}

impl Naming {
    /// A naming whose advertised names differ from the canonical ones as
    /// `published` says (canonical → shown).
    pub fn new(published: HashMap<String, String>) -> Naming {
        Naming {
            spelled: HashMap::new(),
            published,
        }
    }

    /// How a top-level parameter appears in a message path (`a/b` for a
    /// nested spelling).
    pub fn shown(&self, canonical: &str) -> String {
        self.spelled
            .get(canonical)
            .or_else(|| self.published.get(canonical))
            .map_or(canonical, String::as_str)
            .replace('.', "/")
    }
}

/// Copies aliased values to their canonical names and records, in `naming`,
/// which spelling each came from. The canonical name wins when both are
/// given, unless it is `null`; an alias given as `null` still counts as
/// given (so the caller hears `params/<alias> must be string`).
pub fn apply_aliases(args: &mut JsonObject, aliases: &[Alias], naming: &mut Naming) {
    for alias in aliases {
        if args.get(alias.to).is_some_and(|v| !v.is_null()) {
            continue;
        }
        let Some(value) = lookup(args, alias.from).cloned() else {
            continue;
        };
        if value.is_null() && args.contains_key(alias.to) {
            continue;
        }
        args.insert(alias.to.to_string(), value);
        naming
            .spelled
            .insert(alias.to.to_string(), alias.from.to_string());
    }
}

fn lookup<'a>(args: &'a JsonObject, dotted: &str) -> Option<&'a Value> {
    let mut parts = dotted.split('.');
    let mut current = args.get(parts.next()?)?;
    for part in parts {
        current = current.as_object()?.get(part)?;
    }
    Some(current)
}

/// Checks `args` against a portable `schema`, in the order Gemini CLI's
/// validator (Ajv) reports: the `required` names first (a `null` value
/// counts as given), then each property's type, range and items. `required`
/// lists canonical names; `naming` phrases them. Integral floats (`5.0`)
/// given for an integer become integers.
pub fn validate(
    schema: &JsonObject,
    required: &[String],
    args: &mut JsonObject,
    naming: &Naming,
) -> Result<(), String> {
    check_object(schema, required, args, "params", |name| naming.shown(name))
}

/// The `required` list of a schema.
pub fn required_of(schema: &JsonObject) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn validate_nested(schema: &JsonObject, args: &mut JsonObject, at: &str) -> Result<(), String> {
    check_object(schema, &required_of(schema), args, at, str::to_owned)
}

/// The one walk of an object: its `required` names, then each property,
/// errors at `at` (`params`, or a nested path), names as `shown` gives
/// them.
fn check_object(
    schema: &JsonObject,
    required: &[String],
    args: &mut JsonObject,
    at: &str,
    shown: impl Fn(&str) -> String,
) -> Result<(), String> {
    for name in required {
        if !args.contains_key(name) {
            return Err(format!(
                "{at} must have required property '{}'",
                shown(name)
            ));
        }
    }
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    for (name, prop) in props {
        let Some(value) = args.get_mut(name) else {
            continue;
        };
        let Value::Object(prop) = prop else { continue };
        check_value(prop, value, &format!("{at}/{}", shown(name)))?;
    }
    Ok(())
}

fn check_value(schema: &JsonObject, value: &mut Value, at: &str) -> Result<(), String> {
    let expected = schema.get("type").and_then(Value::as_str);
    let fits = match expected {
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("number") => value.is_number(),
        Some("integer") => normalize_integer(value),
        Some("array") => value.is_array(),
        Some("object") => value.is_object(),
        _ => true,
    };
    if !fits {
        return Err(format!("{at} must be {}", expected.unwrap_or("valid")));
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        return Err(format!("{at} must be equal to one of the allowed values"));
    }
    if let (Some(min), Some(n)) = (schema.get("minimum"), value.as_f64())
        && min.as_f64().is_some_and(|m| n < m)
    {
        return Err(format!("{at} must be >= {min}"));
    }
    match value {
        Value::Array(items) => {
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                return Err(format!("{at} must NOT have fewer than {min} items"));
            }
            if let Some(Value::Object(item_schema)) = schema.get("items") {
                for (i, item) in items.iter_mut().enumerate() {
                    check_value(item_schema, item, &format!("{at}/{i}"))?;
                }
            }
        }
        Value::Object(fields) => validate_nested(schema, fields, at)?,
        _ => {}
    }
    Ok(())
}

/// True if `value` is an integer; turns integral floats into integers
/// (saturating at the `i64` range).
fn normalize_integer(value: &mut Value) -> bool {
    if value.is_i64() || value.is_u64() {
        return true;
    }
    match value.as_f64() {
        Some(f) if f.is_finite() && f.fract() == 0.0 => {
            // `as` saturates, which is what a range check downstream wants.
            *value = Value::from(f as i64);
            true
        }
        _ => false,
    }
}

/// Deserialises checked arguments into a tool's parameter struct, straight
/// from the borrowed map (no copy of the whole argument object). Unknown
/// fields are ignored.
pub fn parse<T: DeserializeOwned>(args: &JsonObject) -> Result<T, String> {
    let fields = args.iter().map(|(k, v)| (k.as_str(), v));
    let de = serde::de::value::MapDeserializer::<_, serde_json::Error>::new(fields);
    T::deserialize(de).map_err(|e| format!("params: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Sample {
        /// A name.
        name: String,
        /// A count.
        #[schemars(range(min = 1), extend("default" = 3))]
        count: Option<u32>,
        /// Flags.
        #[schemars(length(min = 1))]
        flags: Option<Vec<String>>,
        /// Nested.
        nested: Option<Inner>,
        /// A mode.
        mode: Option<Mode>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        /// Inner flag.
        on: Option<bool>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "kebab-case")]
    #[allow(dead_code)]
    enum Mode {
        /// First.
        ReadOnly,
        /// Second.
        Off,
    }

    fn walk(v: &Value, found: &mut Vec<String>) {
        if let Value::Object(o) = v {
            for (k, child) in o {
                found.push(k.clone());
                if k == "properties" {
                    if let Value::Object(props) = child {
                        props.values().for_each(|p| walk(p, found));
                    }
                } else {
                    walk(child, found);
                }
            }
        }
    }

    #[test]
    fn schemas_are_flat() {
        let schema = Value::Object(portable_schema::<Sample>());
        let mut keys = Vec::new();
        walk(&schema, &mut keys);
        for k in &keys {
            assert!(
                ALLOWED_KEYWORDS.contains(&k.as_str()),
                "keyword {k} in {schema}"
            );
        }
        assert_eq!(schema["properties"]["count"]["type"], "integer");
        assert_eq!(schema["properties"]["count"]["minimum"], 1);
        assert_eq!(schema["properties"]["count"]["default"], 3);
        assert_eq!(schema["properties"]["flags"]["items"]["type"], "string");
        assert_eq!(schema["properties"]["nested"]["type"], "object");
        assert_eq!(
            schema["properties"]["nested"]["properties"]["on"]["type"],
            "boolean"
        );
        assert_eq!(
            schema["properties"]["mode"]["enum"],
            json!(["read-only", "off"])
        );
        assert_eq!(schema["properties"]["mode"]["type"], "string");
        assert_eq!(schema["required"], json!(["name"]));
        assert_eq!(schema["properties"]["name"]["description"], "A name.");
    }

    fn check(args: Value) -> Result<JsonObject, String> {
        let schema = portable_schema::<Sample>();
        let Value::Object(mut args) = args else {
            panic!("test args must be an object")
        };
        validate(
            &schema,
            &required_of(&schema),
            &mut args,
            &Naming::default(),
        )
        .map(|()| args)
    }

    #[test]
    fn validation_messages_match_gemini_cli() {
        assert_eq!(
            check(json!({})).unwrap_err(),
            "params must have required property 'name'"
        );
        // A property given as null is present, with the wrong type.
        assert_eq!(
            check(json!({"name": null})).unwrap_err(),
            "params/name must be string"
        );
        assert_eq!(
            check(json!({"name": "x", "count": null})).unwrap_err(),
            "params/count must be integer"
        );
        assert_eq!(
            check(json!({"name": "x", "count": 0})).unwrap_err(),
            "params/count must be >= 1"
        );
        assert_eq!(
            check(json!({"name": 5})).unwrap_err(),
            "params/name must be string"
        );
        assert_eq!(
            check(json!({"name": "x", "count": "3"})).unwrap_err(),
            "params/count must be integer"
        );
        assert_eq!(
            check(json!({"name": "x", "count": 1.5})).unwrap_err(),
            "params/count must be integer"
        );
        assert_eq!(
            check(json!({"name": "x", "flags": "a"})).unwrap_err(),
            "params/flags must be array"
        );
        assert_eq!(
            check(json!({"name": "x", "flags": ["a", 2]})).unwrap_err(),
            "params/flags/1 must be string"
        );
        assert_eq!(
            check(json!({"name": "x", "flags": []})).unwrap_err(),
            "params/flags must NOT have fewer than 1 items"
        );
        assert_eq!(
            check(json!({"name": "x", "nested": {"on": "yes"}})).unwrap_err(),
            "params/nested/on must be boolean"
        );
        assert_eq!(
            check(json!({"name": "x", "mode": "fast"})).unwrap_err(),
            "params/mode must be equal to one of the allowed values"
        );
    }

    #[test]
    fn validation_normalises_what_it_accepts() {
        let args = check(json!({"name": "x", "count": 4.0, "extra": 1})).unwrap();
        assert_eq!(args["count"], json!(4));
        assert_eq!(args["extra"], json!(1));
    }

    #[test]
    fn aliases_fill_canonical_names_only_when_absent() {
        let aliases = [
            Alias {
                from: "file_path",
                to: "path",
            },
            Alias {
                from: "opts.git",
                to: "git",
            },
        ];
        let fold = |v: Value| {
            let mut args = v.as_object().cloned().unwrap();
            let mut naming = Naming::default();
            apply_aliases(&mut args, &aliases, &mut naming);
            (args, naming)
        };
        let (args, naming) = fold(json!({"file_path": "a", "opts": {"git": false}}));
        assert_eq!(args["path"], "a");
        assert_eq!(args["git"], false);
        assert_eq!(naming.shown("path"), "file_path");
        assert_eq!(naming.shown("git"), "opts/git");

        let (args, naming) = fold(json!({"file_path": "a", "path": "b"}));
        assert_eq!(args["path"], "b");
        assert_eq!(naming.shown("path"), "path");

        let (args, _) = fold(json!({"file_path": "a", "path": null}));
        assert_eq!(args["path"], "a");

        // An alias given as null is given: the message names it.
        let (args, naming) = fold(json!({"file_path": null}));
        assert_eq!(args["path"], Value::Null);
        assert_eq!(naming.shown("path"), "file_path");
    }

    #[test]
    fn messages_use_the_published_name_when_nothing_was_spelled() {
        let schema = portable_schema::<Sample>();
        let naming = Naming::new(HashMap::from([(
            "name".to_string(),
            "file_name".to_string(),
        )]));
        let mut args = json!({}).as_object().cloned().unwrap();
        assert_eq!(
            validate(&schema, &required_of(&schema), &mut args, &naming).unwrap_err(),
            "params must have required property 'file_name'"
        );
        let mut args = json!({"name": 3}).as_object().cloned().unwrap();
        assert_eq!(
            validate(&schema, &required_of(&schema), &mut args, &naming).unwrap_err(),
            "params/file_name must be string"
        );
    }
}
