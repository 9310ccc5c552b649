//! The export as Terraform: a `terraform` block requiring the provider, the `provider`
//! block the flags describe, then per resource its `import` block and its `resource`
//! block, with notes as comments. Written by `hcl-rs`, so strings are quoted and `${` is
//! escaped as Terraform reads them.

use hcl::expr::{Traversal, Variable};
use hcl::{Block, Body, Expression};

use super::adopt::{Exported, Left};
use super::config_body::ConfigBody;

/// The provider's registry source.
pub const SOURCE: &str = "gpu-tf/gpu";

/// `body` as an HCL block body.
fn hcl_body(body: &ConfigBody) -> Body {
    let mut b = Body::builder();
    for (name, value) in &body.attributes {
        let expr = hcl::to_expression(value).unwrap_or(Expression::Null);
        b = b.add_attribute((name.as_str(), expr));
    }
    for (name, child) in &body.blocks {
        b = b.add_block(Block {
            identifier: hcl::Identifier::unchecked(name.as_str()),
            labels: Vec::new(),
            body: hcl_body(child),
        });
    }
    b.build()
}

/// `body` rendered as HCL text.
fn render(body: &Body) -> String {
    hcl::format::to_string(body).unwrap_or_default()
}

/// Comment lines of `text`.
fn comment(text: &str) -> String {
    text.lines().map(|l| format!("# {l}\n")).collect()
}

/// The whole file: `header` comment, requirements, `provider` (its settings as a body),
/// the resources and, as comments, what was left out.
pub fn file(header: &str, provider: &ConfigBody, resources: &[Exported], left: &[Left]) -> String {
    let mut out = comment(header);
    out.push('\n');
    let required = Body::builder()
        .add_block(
            Block::builder("terraform")
                .add_block(
                    Block::builder("required_providers")
                        .add_attribute((
                            "gpu",
                            Expression::from_iter([
                                (
                                    hcl::ObjectKey::Identifier(hcl::Identifier::unchecked(
                                        "source",
                                    )),
                                    Expression::from(SOURCE),
                                ),
                                (
                                    hcl::ObjectKey::Identifier(hcl::Identifier::unchecked(
                                        "version",
                                    )),
                                    Expression::from(env!("CARGO_PKG_VERSION")),
                                ),
                            ]),
                        ))
                        .build(),
                )
                .build(),
        )
        .add_block(Block {
            identifier: hcl::Identifier::unchecked("provider"),
            labels: vec![hcl::BlockLabel::from("gpu")],
            body: hcl_body(provider),
        })
        .build();
    out.push_str(&render(&required));
    for r in resources {
        out.push('\n');
        out.push_str(&comment(&format!("Found: {}", r.found_at)));
        for n in &r.notes {
            out.push_str(&comment(&format!("TODO: {n}")));
        }
        let to = Traversal::builder(Variable::unchecked(r.type_name.as_str()))
            .attr(hcl::Identifier::unchecked(r.label.as_str()))
            .build();
        let body = Body::builder()
            .add_block(
                Block::builder("import")
                    .add_attribute(("to", Expression::from(to)))
                    .add_attribute(("id", r.import_id.as_str()))
                    .build(),
            )
            .add_block(Block {
                identifier: hcl::Identifier::unchecked("resource"),
                labels: vec![
                    hcl::BlockLabel::from(r.type_name.as_str()),
                    hcl::BlockLabel::from(r.label.as_str()),
                ],
                body: hcl_body(&r.body),
            })
            .build();
        out.push_str(&render(&body));
    }
    if !left.is_empty() {
        out.push('\n');
        out.push_str(&comment("Not exported:"));
        for l in left {
            out.push_str(&comment(&format!("- {}: {}", l.what, l.why)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> Exported {
        Exported {
            type_name: "gpu_node_pool".into(),
            label: "train".into(),
            import_id: "aws/us-east-1/c1/train".into(),
            found_at: "node_pool train-od in aws c1".into(),
            body: ConfigBody {
                attributes: vec![
                    ("name".into(), serde_json::json!("train")),
                    ("max_nodes".into(), serde_json::json!(4)),
                    (
                        "labels".into(),
                        serde_json::json!({"gpu.example/tier": "a", "team": "ml ${x}"}),
                    ),
                ],
                blocks: vec![(
                    "capacity".into(),
                    ConfigBody {
                        attributes: vec![("on_demand_min".into(), serde_json::json!(1))],
                        blocks: vec![],
                    },
                )],
            },
            notes: vec!["`user_data` is sensitive".into()],
        }
    }

    #[test]
    fn the_file_parses_back_as_hcl_with_the_same_values() {
        let text = file(
            "written by a test",
            &ConfigBody::default(),
            &[pool()],
            &[Left {
                what: "node_pool x".into(),
                why: "not ours".into(),
            }],
        );
        assert!(text.contains("to = gpu_node_pool.train"), "{text}");
        assert!(
            text.contains("source = \"gpu-tf/gpu\""),
            "written as people write it: {text}"
        );
        assert!(text.contains("# TODO: `user_data` is sensitive"), "{text}");
        assert!(text.contains("# - node_pool x: not ours"), "{text}");
        assert!(text.contains("$${x}"), "interpolation escaped: {text}");
        let parsed: serde_json::Value = hcl::from_str(&text).unwrap();
        let r = &parsed["resource"]["gpu_node_pool"]["train"];
        assert_eq!(r["max_nodes"], serde_json::json!(4));
        assert_eq!(r["labels"]["team"], "ml ${x}");
        assert_eq!(r["labels"]["gpu.example/tier"], "a");
        assert_eq!(r["capacity"]["on_demand_min"], serde_json::json!(1));
        assert_eq!(
            parsed["terraform"]["required_providers"]["gpu"]["source"],
            SOURCE
        );
    }
}
