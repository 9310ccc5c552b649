//! Turning the core's attribute names (`capacity.on_demand_min`, `taint[1].effect`,
//! `labels["team"]`) into Terraform attribute paths.

use tfplugin::AttributePath;

/// The path `attribute` names; falls back to its first segment on anything unexpected.
pub fn parse(attribute: &str) -> AttributePath {
    let mut path: Option<AttributePath> = None;
    let mut rest = attribute;
    let push_attr = |p: Option<AttributePath>, name: &str| match p {
        None => AttributePath::attr(name),
        Some(p) => p.then_attr(name),
    };
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            rest = r;
            continue;
        }
        if let Some(r) = rest.strip_prefix("[\"") {
            let Some(end) = r.find("\"]") else { break };
            let key = r[..end].replace("\\\"", "\"");
            path = path.map(|p| p.then_key(key));
            rest = &r[end + 2..];
            continue;
        }
        if let Some(r) = rest.strip_prefix('[') {
            let Some(end) = r.find(']') else { break };
            match r[..end].parse::<i64>() {
                Ok(i) => path = path.map(|p| p.then_index(i)),
                Err(_) => break,
            }
            rest = &r[end + 1..];
            continue;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        path = Some(push_attr(path, &rest[..end]));
        rest = &rest[end..];
    }
    path.unwrap_or_else(|| AttributePath::attr(attribute))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_every_shape() {
        assert_eq!(parse("gpu"), AttributePath::attr("gpu"));
        assert_eq!(
            parse("capacity.on_demand_min"),
            AttributePath::attr("capacity").then_attr("on_demand_min")
        );
        assert_eq!(
            parse("taint[1].effect"),
            AttributePath::attr("taint")
                .then_index(1)
                .then_attr("effect")
        );
        assert_eq!(
            parse("labels[\"gpu.tf/x\"]"),
            AttributePath::attr("labels").then_key("gpu.tf/x")
        );
        assert_eq!(
            parse("instance_types[0]"),
            AttributePath::attr("instance_types").then_index(0)
        );
    }
}
