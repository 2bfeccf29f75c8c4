//! The parameter tables of `docs/tools.md`, generated from the tools'
//! declarations: for each dialect the schema `tools/list` publishes, then
//! every spelling the tool accepts. `tests/docs.rs` compares them with the
//! file, so the user reference cannot drift from the schemas.

use std::fmt::Write;

use serde_json::Value;

use super::{ToolSpec, all_specs};
use crate::config::Dialect;
use crate::tools::params::JsonObject;

const DIALECTS: [(Dialect, &str); 2] = [
    (Dialect::Gemini024, "gemini-0.24"),
    (Dialect::GeminiCurrent, "gemini-current"),
];

/// One Markdown block per tool, keyed by its gemini-0.24 name, in
/// `tools/list` order.
pub fn parameter_tables() -> Vec<(&'static str, String)> {
    all_specs()
        .iter()
        .map(|spec| (spec.name(), tool_tables(spec)))
        .collect()
}

fn tool_tables(spec: &ToolSpec) -> String {
    let mut out = String::new();
    let names: Vec<String> = DIALECTS
        .iter()
        .map(|(d, label)| format!("`{}` ({label})", spec.view(*d).name))
        .collect();
    let _ = writeln!(out, "Names: {}.", names.join(", "));
    for (dialect, label) in DIALECTS {
        let schema = &spec.view(dialect).schema;
        let required = required(schema);
        let _ = writeln!(out, "\nParameters {label} shows:\n");
        out.push_str("| parameter | type | required | default | description |\n");
        out.push_str("| --- | --- | --- | --- | --- |\n");
        // Required parameters first; an object's fields stay after it.
        let mut params = rows(schema);
        params.sort_by_key(|(name, _)| {
            let top = name.split('.').next().unwrap_or(name);
            !required.iter().any(|r| r == top)
        });
        for (name, prop) in params {
            let is_required = !name.contains('.') && required.contains(&name);
            let _ = writeln!(
                out,
                "| `{name}` | {} | {} | {} | {} |",
                type_of(prop),
                if is_required { "yes" } else { "no" },
                default_of(prop),
                cell(
                    prop.get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                ),
            );
        }
    }
    out.push_str(
        "\nEvery spelling the tool accepts, in either dialect (an alias is read only when the \
         name it stands for is not given):\n\n",
    );
    out.push_str("| spelling | read as | shown by | description where no dialect shows it |\n");
    out.push_str("| --- | --- | --- | --- |\n");
    let shown: Vec<Vec<String>> = DIALECTS
        .iter()
        .map(|(d, _)| {
            rows(&spec.view(*d).schema)
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        })
        .collect();
    let shown_by = |spelling: &str| -> String {
        let by: Vec<&str> = DIALECTS
            .iter()
            .zip(&shown)
            .filter(|(_, names)| names.iter().any(|n| n == spelling))
            .map(|((_, label), _)| *label)
            .collect();
        if by.is_empty() {
            "none".into()
        } else {
            by.join(", ")
        }
    };
    let mut spellings: Vec<(String, String, String, String)> = Vec::new();
    // An object's fields are reached through the aliases that name them.
    for (name, prop) in rows(spec.accepted())
        .into_iter()
        .filter(|(name, _)| !name.contains('.'))
    {
        let by = shown_by(&name);
        let note = if by == "none" {
            cell(
                prop.get("description")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            )
        } else {
            String::new()
        };
        spellings.push((name.clone(), "itself".into(), by, note));
    }
    for alias in spec.aliases {
        spellings.push((
            alias.from.to_string(),
            format!("`{}`", alias.to),
            shown_by(alias.from),
            String::new(),
        ));
    }
    for (spelling, read_as, by, note) in spellings {
        let _ = writeln!(out, "| `{spelling}` | {read_as} | {by} | {note} |");
    }
    out
}

fn required(schema: &JsonObject) -> Vec<String> {
    match schema.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The properties of a schema in its order, with an object's properties
/// after it as `object.property`.
fn rows(schema: &JsonObject) -> Vec<(String, &JsonObject)> {
    let mut out = Vec::new();
    let Some(Value::Object(props)) = schema.get("properties") else {
        return out;
    };
    for (name, prop) in props {
        let Value::Object(prop) = prop else { continue };
        out.push((name.clone(), prop));
        for (inner, inner_prop) in rows(prop) {
            out.push((format!("{name}.{inner}"), inner_prop));
        }
    }
    out
}

fn type_of(prop: &JsonObject) -> String {
    let base = prop.get("type").and_then(Value::as_str).unwrap_or("any");
    let mut text = match (base, prop.get("items")) {
        ("array", Some(Value::Object(items))) => format!(
            "array of {}",
            items.get("type").and_then(Value::as_str).unwrap_or("any")
        ),
        _ => base.to_string(),
    };
    if let Some(min) = prop.get("minimum") {
        let _ = write!(text, ", ≥ {min}");
    }
    if let Some(min) = prop.get("minItems") {
        let _ = write!(text, ", at least {min} item(s)");
    }
    if let Some(Value::Array(values)) = prop.get("enum") {
        let values: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        let _ = write!(text, ", one of {}", values.join(", "));
    }
    text
}

fn default_of(prop: &JsonObject) -> String {
    match prop.get("default") {
        Some(value) => format!("`{value}`"),
        None => String::new(),
    }
}

/// Text that fits in one table cell and renders as written: pipes and
/// line breaks are escaped everywhere, emphasis and link characters outside
/// code spans.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => in_code = !in_code,
            '|' => out.push('\\'),
            '\n' => {
                out.push(' ');
                continue;
            }
            '*' | '_' | '[' | ']' | '<' if !in_code => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out
}
