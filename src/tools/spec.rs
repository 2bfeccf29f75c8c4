//! How a tool declares itself: what it accepts (one schema, canonical
//! names), the aliases folded into those names, and one view per dialect (the
//! name, description and schema `tools/list` shows). Every dialect accepts
//! every alias; only what is advertised changes.
//!
//! A tool is declared with the builder, e.g.
//! `ToolSpec::reads("glob", "Find Files").params::<GlobParams>().describe(TEXT).run(handler)`.

use std::collections::HashMap;
use std::sync::OnceLock;

use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::Value;

use super::{CallContext, ToolFuture};
use crate::config::Dialect;
use crate::tools::params::{self, Alias, JsonObject, Naming, portable_schema, required_of};

pub type Handler = fn(CallContext, JsonObject) -> ToolFuture;

/// What a tool may do; decides its annotations and when it is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only reads (readOnlyHint).
    Reads,
    /// Changes files (destructiveHint); not offered with `--read-only`.
    Writes,
    /// Runs commands; not offered with `--bash-mode off`.
    Shell,
}

/// A tool as one dialect advertises it.
#[derive(Debug, Clone)]
pub struct View {
    pub name: &'static str,
    pub description: &'static str,
    /// The published input schema.
    pub schema: JsonObject,
    /// Canonical names that must be present, in the order they are checked.
    required: Vec<String>,
    /// How messages name parameters in this dialect.
    naming: Naming,
}

pub struct ToolSpec {
    pub title: &'static str,
    pub access: Access,
    pub idempotent: bool,
    pub aliases: &'static [Alias],
    /// The tool's name in each dialect, indexed by [`Dialect::index`]
    /// (known without building schemas).
    names: [&'static str; 2],
    /// How to build the schemas, on first use.
    source: Source,
    /// The schemas: built on the first `tools/list` or call, not at start.
    built: OnceLock<Built>,
    pub handler: Handler,
}

/// What a tool's schemas are built from.
type SchemaFn = fn() -> JsonObject;

struct Source {
    params: Option<SchemaFn>,
    hidden: Vec<SchemaFn>,
    descriptions: [&'static str; 2],
    /// gemini-current's own schema, if it has one.
    current: Option<SchemaFn>,
}

/// A tool's schemas, once built.
struct Built {
    /// Everything the tool accepts, under canonical names (published and
    /// unpublished parameters alike); arguments are checked against it.
    accepted: JsonObject,
    /// Indexed by [`Dialect::index`].
    views: [View; 2],
}

impl ToolSpec {
    /// Whether a server with `config` offers this tool: not disabled
    /// under any of its names, and allowed by what it may do.
    pub fn offered_by(&self, config: &crate::config::Config) -> bool {
        if self
            .names()
            .any(|n| config.disabled_tools.iter().any(|d| d == n))
        {
            return false;
        }
        match self.access {
            Access::Reads => true,
            Access::Writes => !config.read_only,
            Access::Shell => config.bash.mode != crate::config::BashMode::Off,
        }
    }

    /// A tool that only reads.
    pub fn reads(name: &'static str, title: &'static str) -> Builder {
        Builder::new(name, title, Access::Reads, true)
    }

    /// A tool that writes files.
    pub fn writes(name: &'static str, title: &'static str, idempotent: bool) -> Builder {
        Builder::new(name, title, Access::Writes, idempotent)
    }

    /// A tool that runs commands.
    pub fn shell(name: &'static str, title: &'static str) -> Builder {
        Builder::new(name, title, Access::Shell, false)
    }

    /// The 0.24 name (the name docs/tools.md gives the tool).
    pub fn name(&self) -> &'static str {
        self.names[Dialect::Gemini024.index()]
    }

    /// The tool's name in `dialect` (no schema is built for it).
    pub fn name_in(&self, dialect: Dialect) -> &'static str {
        self.names[dialect.index()]
    }

    pub fn view(&self, dialect: Dialect) -> &View {
        &self.built().views[dialect.index()]
    }

    /// Everything the tool accepts, under canonical names.
    pub fn accepted(&self) -> &JsonObject {
        &self.built().accepted
    }

    /// Every name the tool has in any dialect.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        let [a, b] = self.names;
        std::iter::once(a).chain((b != a).then_some(b))
    }

    /// The schemas, built the first time they are needed: generating them
    /// is most of what a server would otherwise do before it can answer
    /// `initialize`.
    fn built(&self) -> &Built {
        self.built.get_or_init(|| {
            let source = &self.source;
            let params = source.params.map(|f| f()).unwrap_or_default();
            let mut accepted = params.clone();
            for hidden in &source.hidden {
                merge_properties(&mut accepted, &hidden());
            }
            let [old_desc, current_desc] = source.descriptions;
            let old = view(
                self.names[0],
                old_desc,
                params.clone(),
                &accepted,
                self.aliases,
            );
            let schema = source.current.map_or(params, |f| f());
            let current = view(self.names[1], current_desc, schema, &accepted, self.aliases);
            Built {
                accepted,
                views: [old, current],
            }
        })
    }

    /// The tool as `tools/list` shows it in `dialect`. `shell_writes`: the
    /// server's bash mode lets commands write, so the shell says what it
    /// may do in this configuration (clients hold back destructive tools
    /// for approval, and run read-only ones freely).
    pub fn to_tool(&self, dialect: Dialect, shell_writes: bool) -> Tool {
        let view = self.view(dialect);
        let (reads_only, destructive) = match self.access {
            Access::Reads => (true, false),
            Access::Writes => (false, true),
            Access::Shell => (!shell_writes, shell_writes),
        };
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(reads_only)
            .destructive(destructive)
            .idempotent(self.idempotent)
            .open_world(false);
        Tool::new(view.name, view.description, view.schema.clone())
            .with_title(self.title)
            .with_annotations(annotations)
    }

    /// Folds aliases into canonical names and checks the arguments, with
    /// messages in `dialect`'s names.
    pub fn check(&self, dialect: Dialect, args: &mut JsonObject) -> Result<(), String> {
        let view = self.view(dialect);
        let mut naming = view.naming.clone();
        params::apply_aliases(args, self.aliases, &mut naming);
        params::validate(self.accepted(), &view.required, args, &naming)
    }
}

pub struct Builder {
    name: &'static str,
    title: &'static str,
    access: Access,
    idempotent: bool,
    params: Option<SchemaFn>,
    hidden: Vec<SchemaFn>,
    aliases: &'static [Alias],
    description: &'static str,
    current: Option<(&'static str, &'static str, Option<SchemaFn>)>,
}

impl Builder {
    fn new(name: &'static str, title: &'static str, access: Access, idempotent: bool) -> Builder {
        Builder {
            name,
            title,
            access,
            idempotent,
            params: None,
            hidden: Vec::new(),
            aliases: &[],
            description: "",
            current: None,
        }
    }

    /// The parameter struct: canonical names, and the schema gemini-0.24
    /// advertises.
    pub fn params<T: JsonSchema>(mut self) -> Builder {
        self.params = Some(portable_schema::<T>);
        self
    }

    /// More parameters that are accepted and checked in every dialect but
    /// not advertised by gemini-0.24.
    pub fn accepts<T: JsonSchema>(mut self) -> Builder {
        self.hidden.push(portable_schema::<T>);
        self
    }

    pub fn aliases(mut self, aliases: &'static [Alias]) -> Builder {
        self.aliases = aliases;
        self
    }

    /// The description gemini-0.24 shows (and gemini-current, unless
    /// [`Builder::current_schema`] gives its own).
    pub fn describe(mut self, description: &'static str) -> Builder {
        self.description = description;
        self
    }

    /// gemini-current's name, description and schema (`T`'s fields must be
    /// canonical names or aliases).
    pub fn current_schema<T: JsonSchema>(
        mut self,
        name: &'static str,
        description: &'static str,
    ) -> Builder {
        self.current = Some((name, description, Some(portable_schema::<T>)));
        self
    }

    /// Finishes the declaration with the tool's handler. The schemas are
    /// built later, on first use.
    pub fn run(self, handler: Handler) -> ToolSpec {
        let (current_name, current_description, current_schema) =
            self.current.unwrap_or((self.name, self.description, None));
        ToolSpec {
            title: self.title,
            access: self.access,
            idempotent: self.idempotent,
            aliases: self.aliases,
            names: [self.name, current_name],
            source: Source {
                params: self.params,
                hidden: self.hidden,
                descriptions: [self.description, current_description],
                current: current_schema,
            },
            built: OnceLock::new(),
            handler,
        }
    }
}

/// Adds the properties of `from` that `into` lacks.
fn merge_properties(into: &mut JsonObject, from: &JsonObject) {
    let Some(Value::Object(extra)) = from.get("properties") else {
        return;
    };
    if let Value::Object(props) = into
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()))
    {
        for (k, v) in extra {
            props.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

fn properties(schema: &JsonObject) -> Vec<&str> {
    match schema.get("properties") {
        Some(Value::Object(props)) => props.keys().map(String::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A view: what `schema` publishes, mapped onto the canonical names.
fn view(
    name: &'static str,
    description: &'static str,
    schema: JsonObject,
    accepted: &JsonObject,
    aliases: &[Alias],
) -> View {
    let shown = properties(&schema);
    let canonical = properties(accepted);
    // The canonical name each published name stands for: an alias's target
    // first (read_many_files' `include` stands for `paths` where it is the
    // list of files), else the name itself.
    let to_canonical = |published: &str| -> String {
        aliases
            .iter()
            .find(|a| a.from == published)
            .map_or(published, |a| a.to)
            .to_string()
    };
    let mut required: Vec<String> = required_of(&schema)
        .iter()
        .map(|p| to_canonical(p))
        .collect();
    for name in required_of(accepted) {
        if !required.contains(&name) {
            required.push(name);
        }
    }
    // Canonical names this view does not show, under the alias it does.
    let mut published = HashMap::new();
    for c in &canonical {
        if shown.contains(c) {
            continue;
        }
        let alias = aliases
            .iter()
            .find(|a| a.to == *c && shown.contains(&a.from.split('.').next().unwrap_or(a.from)));
        if let Some(a) = alias {
            published.insert((*c).to_string(), a.from.to_string());
        }
    }
    View {
        name,
        description,
        schema,
        required,
        naming: Naming::new(published),
    }
}
