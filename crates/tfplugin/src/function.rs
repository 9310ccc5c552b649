//! Provider-defined functions (`provider::<name>::<function>(...)`, Terraform 1.8 and
//! later): a signature Terraform type-checks calls against, and the errors a call returns.
//! Older Terraform versions ignore them.

use async_trait::async_trait;

use crate::value::{Type, Value};

/// A function's signature and documentation, as `GetFunctions` and the provider schema
/// give it to Terraform.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionSignature {
    /// One-line summary.
    pub summary: String,
    /// Longer description (markdown).
    pub description: String,
    /// Positional parameters, in order.
    pub parameters: Vec<Parameter>,
    /// The result's type.
    pub returns: Type,
}

/// One positional parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// Name, for messages and docs.
    pub name: String,
    /// Type Terraform converts the argument to.
    pub ty: Type,
    /// Description.
    pub description: String,
    /// Whether null is accepted (else Terraform refuses a null argument before the call).
    pub allow_null: bool,
}

impl Parameter {
    /// A parameter that refuses null.
    pub fn new(name: impl Into<String>, ty: Type, description: impl Into<String>) -> Self {
        Parameter {
            name: name.into(),
            ty,
            description: description.into(),
            allow_null: false,
        }
    }
}

/// Why a call failed: the text Terraform shows, and the 0-based argument at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionError {
    /// The message.
    pub text: String,
    /// The argument the message is about, if one.
    pub argument: Option<usize>,
}

impl FunctionError {
    /// An error about argument `index`.
    pub fn argument(index: usize, text: impl Into<String>) -> Self {
        FunctionError {
            text: text.into(),
            argument: Some(index),
        }
    }
}

/// A function a [`crate::Router`] serves by name.
#[async_trait]
pub trait Function: Send + Sync + 'static {
    /// The name after `provider::<provider>::`.
    fn name(&self) -> &str;

    /// The signature.
    fn signature(&self) -> FunctionSignature;

    /// Calls it with arguments already converted to the parameters' types (never unknown;
    /// null only where allowed).
    async fn call(&self, arguments: Vec<Value>) -> Result<Value, FunctionError>;
}
