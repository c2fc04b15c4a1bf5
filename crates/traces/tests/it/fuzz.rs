//! Arbitrary input must give an error or a workload, never a panic.

use proptest::prelude::*;
use std::io::Write;

fn load_bytes(bytes: &[u8], name: &str) -> Result<traces::Workload, traces::TraceError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    traces::load(&p, None, None)
}

fn swf_line() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        Just("-1".to_string()),
        (0i64..100000).prop_map(|v| v.to_string()),
        (-5i64..5).prop_map(|v| v.to_string()),
        "[0-9]{1,25}",
        "[0-9.eE+-]{1,8}",
        "[a-z]{1,3}",
        Just("1e999999".to_string()),
    ];
    prop::collection::vec(field, 0..20).prop_map(|f| f.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn swf_lines_never_panic(lines in prop::collection::vec(swf_line(), 0..6)) {
        let text = format!("; MaxProcs: 8\n{}\n", lines.join("\n"));
        let _ = load_bytes(text.as_bytes(), "f.swf");
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = load_bytes(&bytes, "f.swf");
        let _ = load_bytes(&bytes, "f.json");
        let mut gz = vec![0x1f, 0x8b];
        gz.extend_from_slice(&bytes);
        let _ = load_bytes(&gz, "f.swf.gz");
    }

    #[test]
    fn batsim_documents_never_panic(
        nb in "[-0-9.a-z\"]{0,6}",
        sub in "[-0-9.eE\"a-z]{0,10}",
        res in "[-0-9.\"]{0,5}",
        wall in "[-0-9.\"nul]{0,6}",
        delay in "[-0-9.eE\"]{0,8}",
        kind in "(delay|parallel|\"x\")",
    ) {
        let doc = format!(
            "{{\"nb_res\": {nb}, \"jobs\": [{{\"id\": 1, \"subtime\": {sub}, \"walltime\": {wall}, \"res\": {res}, \"profile\": \"p\"}}], \"profiles\": {{\"p\": {{\"type\": \"{kind}\", \"delay\": {delay}}}}}}}"
        );
        let _ = load_bytes(doc.as_bytes(), "w.json");
    }
}
