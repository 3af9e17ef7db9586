//! The smallest arguments a tool's input schema accepts, for calls that only need to reach the
//! upstream (the live rug-pull calls each tool before, during and after a change). A proxy that
//! validates arguments (mcpproxy does, with a JSON Schema validator) refuses `{}` for a tool with
//! required parameters, and that refusal would read as "the proxy blocked the changed tool".
//!
//! Best effort over the common keywords: `const`, `enum`, `default`, `type` (first of a list),
//! `required`/`properties`, `minLength`, `minimum`/`exclusiveMinimum`, `minItems`/`items`,
//! `anyOf`/`oneOf`/`allOf` (first branch / merged). Nesting is bounded; schema text is never
//! evaluated.

use serde_json::{Value, json};

const MAX_DEPTH: usize = 8;

/// Arguments for a call to a tool with this input schema: always a JSON object.
pub fn sample_args(schema: Option<&Value>) -> Value {
    match schema.map(|s| sample(s, 0)) {
        Some(Value::Object(o)) => Value::Object(o),
        _ => json!({}),
    }
}

fn sample(schema: &Value, depth: usize) -> Value {
    let Some(s) = schema.as_object().filter(|_| depth <= MAX_DEPTH) else {
        return Value::Null;
    };
    let first_of = |k: &str| s.get(k).and_then(Value::as_array).and_then(|a| a.first());
    if let Some(v) = s.get("const").or(first_of("enum")).or(s.get("default")) {
        return v.clone();
    }
    if let Some(first) = first_of("anyOf").or(first_of("oneOf")) {
        return sample(first, depth + 1);
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        let parts = all
            .iter()
            .filter_map(|p| sample(p, depth + 1).as_object().cloned());
        return Value::Object(parts.flatten().collect());
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.contains_key("properties") || s.contains_key("required") => "object",
        _ => "string",
    };
    match ty {
        "object" => {
            let props = s.get("properties").and_then(Value::as_object);
            let required = s.get("required").and_then(Value::as_array).into_iter();
            let sample_of = |name: &str| match props.and_then(|p| p.get(name)) {
                Some(sub) if sub.is_object() => sample(sub, depth + 1),
                _ => json!("x"),
            };
            let names = required.flatten().filter_map(Value::as_str);
            Value::Object(names.map(|n| (n.to_string(), sample_of(n))).collect())
        }
        "array" => {
            let n = s
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(4);
            let item = s.get("items").cloned().unwrap_or(json!({}));
            Value::Array((0..n).map(|_| sample(&item, depth + 1)).collect())
        }
        "integer" | "number" => {
            let lo = s.get("minimum").and_then(Value::as_f64);
            let ex = s.get("exclusiveMinimum").and_then(Value::as_f64);
            let v = match (lo, ex) {
                (Some(m), _) => m.ceil(),
                (None, Some(m)) => m.floor() + 1.0,
                _ => 0.0_f64.min(s.get("maximum").and_then(Value::as_f64).unwrap_or(0.0)),
            };
            json!(v as i64)
        }
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => {
            let n = s
                .get("minLength")
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .clamp(1, 64);
            json!("x".repeat(n as usize))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_parameters_get_values_of_their_type_and_optional_ones_are_left_out() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "mode": {"type": "string", "enum": ["r", "w"]},
                "count": {"type": "integer", "minimum": 3},
                "force": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                "opts": {"type": "object", "properties": {"depth": {"type": "number"}}, "required": ["depth"]},
                "maybe": {"type": ["null", "string"]},
                "optional": {"type": "string"}
            },
            "required": ["path", "mode", "count", "force", "tags", "opts", "maybe", "ghost"]
        });
        assert_eq!(
            sample_args(Some(&schema)),
            json!({"path": "x", "mode": "r", "count": 3, "force": false, "tags": ["x"],
                   "opts": {"depth": 0}, "maybe": "x", "ghost": "x"})
        );
    }

    #[test]
    fn no_schema_or_a_schema_that_is_not_an_object_gives_empty_arguments() {
        assert_eq!(sample_args(None), json!({}));
        assert_eq!(sample_args(Some(&json!("nonsense"))), json!({}));
        assert_eq!(sample_args(Some(&json!({"type": "object"}))), json!({}));
    }

    #[test]
    fn deep_nesting_is_cut_off() {
        let mut s = json!({"type": "string"});
        for _ in 0..100 {
            s = json!({"type": "object", "properties": {"a": s}, "required": ["a"]});
        }
        let v = sample_args(Some(&s));
        assert!(v.is_object());
        assert!(serde_json::to_string(&v).unwrap().len() < 200);
    }
}
