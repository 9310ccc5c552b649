//! Generated protobuf/gRPC code for the Terraform plugin protocol (v6.10)
//! and the go-plugin helper services.
//!
//! The `.proto` sources live in `<workspace>/proto` and are compiled by
//! `build.rs` at build time.

/// Terraform plugin protocol v6 messages and the `Provider` service.
#[allow(missing_docs, clippy::all, clippy::pedantic, clippy::nursery)]
pub mod tfplugin6 {
    tonic::include_proto!("tfplugin6");
}

/// go-plugin helper services: `GRPCController`, `GRPCStdio`, `GRPCBroker`.
#[allow(missing_docs, clippy::all, clippy::pedantic, clippy::nursery)]
pub mod plugin {
    tonic::include_proto!("plugin");
}

#[cfg(test)]
mod tests {
    use super::tfplugin6::{Schema, StringKind, get_provider_schema, schema};
    use prost::Message;

    #[test]
    fn get_provider_schema_response_round_trips() {
        let block = schema::Block {
            version: 3,
            attributes: vec![schema::Attribute {
                name: "gpu_count".to_owned(),
                r#type: br#""number""#.to_vec(),
                description: "Number of GPUs".to_owned(),
                required: true,
                description_kind: StringKind::Markdown as i32,
                ..Default::default()
            }],
            description: "A GPU node".to_owned(),
            ..Default::default()
        };
        let mut response = get_provider_schema::Response {
            provider: Some(Schema {
                version: 1,
                block: Some(block.clone()),
            }),
            ..Default::default()
        };
        response.resource_schemas.insert(
            "gpu_node".to_owned(),
            Schema {
                version: 2,
                block: Some(block),
            },
        );

        let bytes = response.encode_to_vec();
        let decoded = get_provider_schema::Response::decode(bytes.as_slice()).expect("decode");

        assert_eq!(decoded, response);
        let attr = &decoded.resource_schemas["gpu_node"]
            .block
            .as_ref()
            .expect("block")
            .attributes[0];
        assert_eq!(attr.name, "gpu_count");
        assert!(attr.required);
        assert_eq!(attr.description_kind(), StringKind::Markdown);
    }
}
