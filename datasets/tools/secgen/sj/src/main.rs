fn main() {
    let s = std::fs::read_to_string("/work/main/datasets/v0/security.json").unwrap();
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    let es = v["entries"].as_array().unwrap();
    let tp = es.iter().find(|e| e["id"] == "tp-010").unwrap();
    let d = tp["description"].as_str().unwrap();
    let tags = d.chars().filter(|c| (0xE0000..=0xE007F).contains(&(*c as u32))).count();
    println!("{} entries, tp-010 tag chars: {}", es.len(), tags);
}
