//! A complete Terraform provider in one file, built on `tfplugin` alone: provider `hello`
//! with a data source, `hello_greeting` (answers `"<greeting>, <name>!"`), and a resource,
//! `hello_note`, that lives only in Terraform's state (nothing outside it is touched).
//!
//! It shows the SDK end to end: typed `Resource` / `DataSource` traits and the `Router`,
//! typed decoding with `Tf<T>` (values unknown at plan time), validators, plan modifiers
//! (requires-replace, use-state-for-unknown, semantic equality), `ImportId`, the
//! `timeouts` block and typed private state.
//!
//! Build it with `cargo build -p tfplugin --example terraform-provider-hello`, point a
//! `dev_overrides` entry for `registry.terraform.io/example/hello` at
//! `target/debug/examples`, and `terraform plan` a configuration that uses it
//! (`acceptance/tests/protocol/test_tfplugin_example.py` does exactly that). It is also the
//! start-up baseline of `make bench`: the least a Rust provider does before its handshake.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tfplugin::import_id::ImportId;
use tfplugin::plan::Modifiers;
use tfplugin::provider::{
    ApplyResourceChangeResponse, ImportResourceStateResponse, PlanResourceChangeResponse,
    ReadDataSourceResponse,
};
use tfplugin::resource::{
    ApplyRequest, ImportRequest, PlanRequest, ReadDataRequest, ValidateRequest, imported,
};
use tfplugin::tf::{decode, encode};
use tfplugin::timeouts::{self, Timeouts};
use tfplugin::validators::{Rules, not_empty, string_matches};
use tfplugin::{
    Attribute, Block, DataSource, Diagnostics, Resource, Router, Schema, Tf, Type, Value,
};

/// `hello_greeting`: a data source.
struct Greeting;

/// The configuration and result of `hello_greeting`.
#[derive(Serialize, Deserialize)]
struct GreetingValue {
    name: String,
    greeting: Option<String>,
    text: Option<String>,
}

#[async_trait]
impl DataSource for Greeting {
    fn type_name(&self) -> &str {
        "hello_greeting"
    }

    fn schema(&self) -> Schema {
        Schema::new(
            Block::new("Greets someone.")
                .attribute(Attribute::required("name", Type::String).describe("Who to greet."))
                .attribute(
                    Attribute::optional("greeting", Type::String)
                        .describe("The word of greeting (default `Hello`)."),
                )
                .attribute(Attribute::computed("text", Type::String).describe("The greeting.")),
        )
    }

    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        // Unknown values (known only after apply) are skipped; an empty name is refused
        // with the attribute's path, as Terraform users expect.
        Rules::new()
            .attr("name", not_empty())
            .check(request.config())
    }

    async fn read(&self, request: ReadDataRequest) -> ReadDataSourceResponse {
        let mut v: GreetingValue = match request.decode_config() {
            Ok(v) => v,
            Err(diagnostics) => return diagnostics.into(),
        };
        let greeting = v.greeting.as_deref().unwrap_or("Hello");
        v.text = Some(format!("{greeting}, {}!", v.name));
        match encode(&v, &self.schema().value_type()) {
            Ok(state) => ReadDataSourceResponse {
                state,
                diagnostics: Diagnostics::new(),
            },
            Err(diagnostics) => diagnostics.into(),
        }
    }
}

/// `hello_note`: a resource kept only in state.
struct Note;

/// A `hello_note` as configured, planned or stored. `Tf` fields decode unknowns too.
#[derive(Debug, Serialize, Deserialize)]
struct NoteValue {
    id: Tf<String>,
    name: Tf<String>,
    text: Tf<String>,
    style: Tf<String>,
    revision: Tf<i64>,
    timeouts: Tf<TimeoutsValue>,
}

/// The `timeouts` block as a value (kept as written).
#[derive(Debug, Serialize, Deserialize)]
struct TimeoutsValue {
    create: Tf<String>,
    update: Tf<String>,
    delete: Tf<String>,
}

/// The private-state entry counting the applies that changed the note.
const REVISION: &str = "revision";

/// `plain` and `shout` in any letter case mean the same style.
fn same_style(prior: &Value, planned: &Value) -> bool {
    match (prior.as_str(), planned.as_str()) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => false,
    }
}

fn note_modifiers() -> Modifiers {
    Modifiers::new()
        .requires_replace("name")
        .use_state_for_unknown("id")
        .semantic_equality("style", same_style)
}

fn note_schema() -> Schema {
    Schema::new(
        Block::new("A note kept in Terraform's state.")
            .attribute(
                Attribute::required("name", Type::String)
                    .describe("Lower-case letters, digits and `-`. Changing it replaces the note."),
            )
            .attribute(Attribute::required("text", Type::String).describe("The note."))
            .attribute(
                Attribute::optional("style", Type::String)
                    .describe("`plain` or `shout`, in any letter case (a new case is no change)."),
            )
            .attribute(Attribute::computed("id", Type::String).describe("The note's name."))
            .attribute(
                Attribute::computed("revision", Type::Number)
                    .describe("How many applies have changed the note (counted in private state)."),
            )
            .block(timeouts::block("1m", "1m", "1m")),
    )
}

#[async_trait]
impl Resource for Note {
    fn type_name(&self) -> &str {
        "hello_note"
    }

    fn schema(&self) -> Schema {
        note_schema()
    }

    async fn validate(&self, request: ValidateRequest) -> Diagnostics {
        let mut d = Rules::new()
            .attr("name", not_empty())
            .attr(
                "name",
                string_matches(
                    |s| {
                        s.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    },
                    "lower-case letters, digits and `-`",
                ),
            )
            .attr(
                "style",
                string_matches(
                    |s| ["plain", "shout"].iter().any(|x| x.eq_ignore_ascii_case(s)),
                    "`plain` or `shout`",
                ),
            )
            .check(request.config());
        Timeouts::read(request.config(), &mut d);
        d
    }

    async fn plan(&self, request: PlanRequest) -> PlanResourceChangeResponse {
        let mut response = request.proposed_response();
        if request.is_destroy() {
            return response;
        }
        note_modifiers().apply(request.prior(), &mut response);
        let mut note: NoteValue = match decode(&response.planned_state) {
            Ok(n) => n,
            Err(diagnostics) => return diagnostics.into(),
        };
        // The id is the name, known at plan time whenever the name is.
        note.id = note.name.clone();
        let changed = ["text", "style"]
            .iter()
            .any(|a| request.prior().get_attr(a) != response.planned_state.get_attr(a));
        if request.is_create() || changed {
            note.revision = Tf::Unknown;
        }
        match encode(&note, &note_schema().value_type()) {
            Ok(planned) => response.planned_state = planned,
            Err(diagnostics) => response.diagnostics = diagnostics,
        }
        response
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResourceChangeResponse {
        if request.is_destroy() {
            return ApplyResourceChangeResponse::default();
        }
        let (mut note, mut private) = match (
            request.decode_planned::<NoteValue>(),
            request.private_state(),
        ) {
            (Ok(Some(n)), Ok(p)) => (n, p),
            (Err(d), _) | (_, Err(d)) => return request.failed(d),
            (Ok(None), _) => return ApplyResourceChangeResponse::default(),
        };
        if note.revision.is_unknown() {
            let last: i64 = private.get(REVISION).ok().flatten().unwrap_or(0);
            if let Err(e) = private.set(REVISION, &(last + 1)) {
                let d = tfplugin::Diagnostic::error("Cannot save the revision", e.to_string());
                return request.failed(d.into());
            }
            note.revision = Tf::Known(last + 1);
        }
        match encode(&note, &note_schema().value_type()) {
            Ok(new_state) => ApplyResourceChangeResponse {
                new_state,
                private: private.to_bytes(),
                diagnostics: Diagnostics::new(),
            },
            Err(d) => request.failed(d),
        }
    }

    /// `terraform import hello_note.x '<name>/<text>'`.
    async fn import(&self, request: ImportRequest) -> ImportResourceStateResponse {
        let id = match ImportId::parse(request.id(), &["name", "text"], '/') {
            Ok(id) => id,
            Err(e) => return Diagnostics::from(e.to_diagnostic()).into(),
        };
        let name = id.get("name").unwrap_or_default().to_string();
        let note = NoteValue {
            id: Tf::Known(name.clone()),
            name: Tf::Known(name),
            text: Tf::Known(id.get("text").unwrap_or_default().to_string()),
            style: Tf::Null,
            revision: Tf::Known(0),
            timeouts: Tf::Null,
        };
        match encode(&note, &note_schema().value_type()) {
            Ok(state) => imported(state),
            Err(diagnostics) => diagnostics.into(),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let provider = Router::new(Schema::new(Block::new("A provider that greets.")))
        .data_source(Greeting)
        .resource(Note);
    match tfplugin::server::serve(provider).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("terraform-provider-hello: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
