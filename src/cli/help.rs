//! The examples and exit codes shown after each command's help.

/// The exit codes of `run` (and the command line as a whole).
macro_rules! exit_codes {
    () => {
        "\
Exit codes:
  0  pass (or no baseline: report only)
  1  the gate failed: a gated metric regressed beyond its tolerance, or a detector broke its
     FPR ceiling or recall floor
  2  bad input or usage: invalid dataset, baseline or flag (nothing is written)
  3  the system under test could not be measured (a partial report is written)"
    };
}

pub const AFTER_HELP: &str = concat!(
    exit_codes!(),
    "

Examples:
  # zero-config: embedded datasets, BM25 retriever, reference detectors
  evalgate run
  # five repetitions (mean ± 95% CI), reports in out/
  evalgate run --runs 5 --out out/
  evalgate validate --corpus c.json --golden g.json --security-corpus s.json
  # re-measure and rewrite baselines/default.json (prints every change)
  evalgate baseline update
  # a command's own flags, and examples of it
  evalgate <COMMAND> --help"
);

pub const RUN_HELP: &str = concat!(
    "\
Examples:
  # zero-config: embedded datasets, BM25 retriever, reference detectors
  evalgate run
  # five repetitions (mean ± 95% CI), reports in out/
  evalgate run --runs 5 --out out/
  # a proxy already running, searched over MCP, against the baseline written for it
  evalgate run --sut mcp --url http://127.0.0.1:8080/mcp --baseline baselines/myproxy.json
  # mcpproxy launched over the corpus; its own scan and live rug-pulls beside the rules
  evalgate run --mcpproxy-bin ./mcpproxy --detectors rules,drift,proxy-scan,rug-pull-live
  # one shard of four (a CI matrix job); `evalgate merge` joins the four reports
  evalgate run --shard 2/4 --out shard-2

",
    exit_codes!()
);

pub const MERGE_HELP: &str = concat!(
    "\
The shards are runs with --shard INDEX/COUNT (say, the jobs of a CI matrix, each with
`--shard i/4 --out shard-i`), of the same evalgate version, datasets, system, detectors and
--runs, together covering every shard once. Each shard's report.json holds its raw
observations; they are joined in dataset order and scored, gated and published as one run.

Examples:
  # the four shards' reports, in any order
  evalgate merge shard-*/report.json --out evalgate-report
  # shards measured on your own datasets: merge loads the same files
  evalgate merge --datasets datasets/mine s1/report.json s2/report.json

",
    exit_codes!()
);

pub const FITNESS_HELP: &str = "\
The candidate is laid over the frozen corpus (only the tools it names change), every golden
query goes through the system under test, and the result is exactly what `evalgate retrieval`
would report for a corpus edited the same way. The system must be one whose corpus evalgate
serves: the embedded BM25 retriever (in-process, fast) or a launched proxy (reference,
mcpproxy, launch: started afresh for each candidate over replay servers serving the candidate).

Output, one JSON object per candidate:
  overall            {queries, recall_at_1/3/5/10, mrr, ndcg_at_10, map}
  splits.dev         the same over the dev queries: optimise on these
  splits.held_out    the same over the held-out queries (\"held_out\": true): keep them unseen
                     by the optimiser; look at them only to check a finished candidate
  per_tool           each overridden tool: relevant_in, found_in_top_5, recall_at_5, mrr
  line, error        (--lines) the input line; why a line could not be scored

Examples:
  # the corpus as it is (a file holding {}): the score to beat
  evalgate fitness --overrides none.json
  # one candidate, {\"server:tool\": {\"description\": \"…\"}, …}
  evalgate fitness --overrides candidate.json
  # an optimiser loop: one candidate per stdin line in, one result per stdout line out
  evalgate fitness --lines
  # through the reference proxy instead of in-process (slow path, same numbers)
  evalgate fitness --sut reference --overrides candidate.json

Exit codes:
  0  scored (with --lines: every line answered, malformed ones with an error object)
  2  bad input or usage: the datasets, the settings, or the --overrides file (named by its
     JSON path)
  3  the system under test could not be measured for a candidate (the error object says why)
";

pub const RETRIEVAL_HELP: &str = "\
Examples:
  # the embedded BM25 retriever over the embedded datasets
  evalgate retrieval
  # a proxy already running, searched over MCP
  evalgate retrieval --sut mcp --url http://127.0.0.1:8080/mcp --header \"X-API-Key: KEY\"
  # a REST search endpoint (mcpproxy's by default)
  evalgate retrieval --sut rest --url http://127.0.0.1:8080/api/v1/index/search
  # re-score the rankings an earlier run recorded, without a system
  evalgate retrieval --sut recorded --recorded evalgate-report/report.json --no-baseline

Exit codes:
  0  pass (or no baseline: report only)
  1  the gate failed: a gated metric regressed beyond its tolerance
  2  bad input or usage: invalid dataset, baseline or flag (nothing is written)
  3  the system under test could not be measured (a partial report is written)";

pub const SECURITY_HELP: &str = "\
Examples:
  # the reference rules and drift detectors over the embedded security corpus
  evalgate security
  # verdicts recorded elsewhere (a report.json, a scan-eval file or {entry id: bool})
  evalgate security --detectors recorded --recorded verdicts.json
  # a launched proxy's own scan and rug-pulls played against it (the reference proxy)
  evalgate security --sut reference --detectors proxy-scan,rug-pull-live
  # the same against mcpproxy
  evalgate security --mcpproxy-bin ./mcpproxy --detectors proxy-scan,rug-pull-live

Exit codes:
  0  pass (or no baseline: report only)
  1  the gate failed: a detector broke its FPR ceiling or recall floor, or regressed
  2  bad input or usage: invalid dataset, baseline or flag (nothing is written)
  3  a detector could not be run (a partial report is written)";

pub const VALIDATE_HELP: &str = "\
Examples:
  # the embedded datasets
  evalgate validate
  # a dataset directory, held to evalgate's own authoring rules
  evalgate validate --datasets datasets/v0 --profile strict
  evalgate validate --corpus c.json --golden g.json --security-corpus s.json";

pub const CARD_HELP: &str = "\
Examples:
  # the embedded datasets
  evalgate card
  evalgate card --datasets datasets/v0
  # rewrite the generated block in place; or fail (exit 1) when it is stale
  evalgate card --update datasets/README.md
  evalgate card --check datasets/README.md";

pub const BASELINE_HELP: &str = "\
Examples:
  evalgate baseline update
  evalgate baseline import baseline_v1.json --output baselines/default.json";

pub const BASELINE_UPDATE_HELP: &str = "\
Examples:
  # re-measure the embedded BM25 system and rewrite baselines/default.json (prints every change)
  evalgate baseline update
  # a launched mcpproxy's own baseline, from three runs
  evalgate baseline update --mcpproxy-bin bin/mcpproxy --runs 3 --output baselines/mcpproxy.json
  # from a run's report, without measuring again; show the changes, write nothing
  evalgate baseline update --from evalgate-report/report.json --dry-run";

pub const BASELINE_IMPORT_HELP: &str = "\
Examples:
  evalgate baseline import baseline_v1.json --output baselines/default.json
  # print the converted baseline, write nothing
  evalgate baseline import baseline_v1.json --dry-run";

pub const PUBLISH_HELP: &str = "\
Examples:
  # in a workflow_run workflow: post the report a pull request's run uploaded
  evalgate publish --report-dir evalgate-report --pr 42 --head-sha \"$HEAD_SHA\"
  # outside GitHub Actions too, with a comment on every run
  evalgate publish --publish always --comment always";

pub const CORPUS_HELP: &str = "\
Examples:
  evalgate corpus snapshot --server time --out corpus.json -- uvx mcp-server-time";

pub const SNAPSHOT_HELP: &str = "\
Examples:
  # a stdio server (its command after --)
  evalgate corpus snapshot --server time --out corpus.json -- uvx mcp-server-time
  # a streamable-HTTP server
  evalgate corpus snapshot --server docs --url http://127.0.0.1:8000/mcp --header \"X-API-Key: K\"
  # add another server to the same corpus
  evalgate corpus snapshot --server memory --out corpus.json --merge -- mcp-server-memory";

pub const REPLAY_HELP: &str = "\
Examples:
  # one server's frozen tools from the embedded corpus, over stdio
  evalgate replay --server github
  # serve its security entries too, switching to their `after` definitions after the first list
  evalgate replay --server github --security-corpus security.json --rug-pull after-list";

pub const PROXY_HELP: &str = "\
Examples:
  evalgate proxy --mcpproxy-config mcp_config.json --listen 127.0.0.1:8080";

pub const SCHEMA_HELP: &str = "\
Examples:
  evalgate schema --out schemas";
