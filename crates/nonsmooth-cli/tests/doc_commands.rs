//! The shell blocks (```` ```sh ````) of README.md and docs/*.md run as a user runs them: each
//! command through `bash` in a fresh scratch folder holding a link to `examples/`, with the
//! `nonsmooth` binary of this build first on `PATH`, in the block's order (a later command
//! may read what an earlier one wrote). Each command must exit with status 0, and what the
//! doc says it gives is checked: the files named by a `# → …` comment below a command exist
//! (a bare name is looked up in the command's `--out` folder), and a `# → JSON …` comment
//! means its standard output parses as JSON.
//!
//! Not run, each with its reason printed: a block preceded by the HTML comment
//! `<!-- doc-test: skip (reason) -->` (installs, network, builds, hours of computing), and the
//! single commands of [`LONG_COMMANDS`]. `cargo install --path crates/nonsmooth-cli` (default
//! features) is the binary under test. Any other program than `nonsmooth` and a few file
//! utilities fails the test until its block is marked. The Python blocks are run by
//! `python/tests/test_docs.py`.
//!
//! `cargo test -p nonsmooth-cli --test cli doc_commands:: -- --nocapture` prints every command
//! with its time.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Commands inside run blocks that are too long for the test suite: (doc, the command's
/// start, reason). Every entry must match a command of its doc.
const LONG_COMMANDS: &[(&str, &str, &str)] = &[
    (
        "README.md",
        "nonsmooth soak --steps 1000000",
        "10⁶ steps of two scenarios (minutes); the soak tests run its short form",
    ),
    (
        "docs/grasping.md",
        "nonsmooth reproduce id-tasks --out",
        "the full grasp and gait tasks (minutes); the --quick line below runs",
    ),
    (
        "docs/locomotion.md",
        "nonsmooth reproduce id-tracking",
        "four full paper experiments (minutes)",
    ),
    (
        "docs/stability.md",
        "nonsmooth stability --alpha 30 --mu2 2 --e 0 --grid",
        "64 certificates with the PTT baseline: 72 s in the test profile",
    ),
];

/// Stand-ins for the user's own files that a block names (doc, file name, contents or the
/// example it copies as `@example`).
const USER_FILES: &[(&str, &str, &str)] = &[
    (
        "docs/impact.md",
        "my_model.toml",
        "@impact_rocking_block.toml",
    ),
    (
        "docs/simulation.md",
        "my_model.toml",
        "@bouncing_sphere.toml",
    ),
    (
        "docs/locomotion.md",
        "my_quadruped.toml",
        "@id_quadruped.toml",
    ),
    (
        "docs/inverse-dynamics.md",
        "state.json",
        r#"{"q": [0.1, 0.2], "v": [0.0, 0.0]}"#,
    ),
    (
        "docs/inverse-dynamics.md",
        "desired.json",
        r#"{"acceleration": [0.0, 0.0]}"#,
    ),
];

/// Programs besides `nonsmooth` that a run block may use as they are.
const FILE_UTILITIES: &[&str] = &["cp", "mkdir", "ls", "cat"];

/// Longest time one command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fenced code block of a Markdown file.
struct Block {
    /// Line of the opening fence (1-based).
    line: usize,
    /// The fence's language tag (`sh`, `python`, …).
    lang: String,
    /// Lines between the fences, each with its line number.
    lines: Vec<(usize, String)>,
    /// The reason of a `<!-- doc-test: skip (reason) -->` on the last non-blank line before
    /// the fence.
    skip: Option<String>,
}

fn skip_reason(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("<!--")?.trim_start();
    let rest = rest.strip_prefix("doc-test:")?.trim_start();
    let rest = rest.strip_prefix("skip")?.trim_start();
    let rest = rest.strip_suffix("-->")?.trim_end();
    let reason = rest.strip_prefix('(')?.strip_suffix(')')?.trim();
    (!reason.is_empty()).then(|| reason.to_string())
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    let mut last_text: Option<&str> = None;
    for (k, line) in text.lines().enumerate() {
        let number = k + 1;
        let fence = line.trim_start().starts_with("```");
        if open.is_some() {
            if fence {
                out.extend(open.take());
                last_text = None;
            } else if let Some(block) = open.as_mut() {
                block.lines.push((number, line.to_string()));
            }
            continue;
        }
        if fence {
            let tag = line.trim_start().trim_start_matches('`').trim();
            let lang = tag
                .split(|c: char| c == ',' || c.is_whitespace())
                .next()
                .unwrap_or("");
            open = Some(Block {
                line: number,
                lang: lang.to_string(),
                lines: Vec::new(),
                skip: last_text.and_then(skip_reason),
            });
        } else if !line.trim().is_empty() {
            last_text = Some(line);
        }
    }
    out
}

/// One command of a shell block: its text (continuation lines joined) and the comment lines
/// written below it.
struct ShellCommand {
    line: usize,
    text: String,
    notes: String,
}

fn commands(block: &Block) -> Vec<ShellCommand> {
    let mut out: Vec<ShellCommand> = Vec::new();
    let mut pending: Option<ShellCommand> = None;
    for (number, raw) in &block.lines {
        let line = raw.trim();
        if let Some(cmd) = pending.as_mut() {
            let (body, more) = continued(line);
            cmd.text.push(' ');
            cmd.text.push_str(body);
            if !more {
                out.extend(pending.take());
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(last) = out.last_mut() {
                last.notes.push_str(comment.trim());
                last.notes.push(' ');
            }
            continue;
        }
        let (body, more) = continued(line);
        let cmd = ShellCommand {
            line: *number,
            text: body.to_string(),
            notes: String::new(),
        };
        if more {
            pending = Some(cmd);
        } else {
            out.push(cmd);
        }
    }
    out.extend(pending);
    out
}

/// A line without its trailing `\` and whether it continues on the next line.
fn continued(line: &str) -> (&str, bool) {
    match line.strip_suffix('\\') {
        Some(body) => (body.trim_end(), true),
        None => (line, false),
    }
}

/// The command without its trailing `# comment` (none of the docs' commands quote a `#`).
fn without_comment(text: &str) -> &str {
    match text.find(" #") {
        Some(k) => text[..k].trim_end(),
        None => text.trim_end(),
    }
}

/// The file names of a `→ …` note: words ending in a file extension the tools write.
fn named_files(notes: &str) -> Vec<String> {
    let Some(claim) = notes.trim().strip_prefix('→') else {
        return Vec::new();
    };
    claim
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| ",;:()".contains(c)))
        .filter(|w| {
            [".csv", ".json", ".svg", ".html", ".png"]
                .iter()
                .any(|ext| w.ends_with(ext) && w.len() > ext.len())
        })
        .map(str::to_string)
        .collect()
}

fn out_dir(command: &str) -> Option<&str> {
    let mut words = command.split_whitespace();
    while let Some(w) = words.next() {
        if w == "--out" {
            return words.next();
        }
    }
    None
}

fn is_default_install(command: &str) -> bool {
    without_comment(command) == "cargo install --path crates/nonsmooth-cli"
}

/// Runs `command` through bash in `dir` (the test's binary first on PATH) and returns its
/// status, stdout and stderr, or why it could not run.
fn run_shell(dir: &Path, command: &str) -> Result<(bool, String, String), String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_nonsmooth"));
    let bin_dir = bin.parent().ok_or("the binary has a folder")?;
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let stdout = dir.join(".stdout");
    let stderr = dir.join(".stderr");
    let mut child = Command::new("bash")
        .args(["-eo", "pipefail", "-c", command])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).map_err(|e| e.to_string())?)
        .stderr(std::fs::File::create(&stderr).map_err(|e| e.to_string())?)
        .spawn()
        .map_err(|e| format!("bash did not start: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > COMMAND_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {COMMAND_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Ok((status.success(), read(&stdout), read(&stderr)))
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Runs every shell block of `doc` (relative to the repository root); returns the failures.
fn run_doc(doc: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(doc)).expect("the doc is readable");
    let scratch = std::env::temp_dir().join(format!(
        "nonsmooth-doc-commands-{}-{}",
        std::process::id(),
        doc.replace(['/', '.'], "-")
    ));
    let mut failures = Vec::new();
    let mut long_used = vec![false; LONG_COMMANDS.len()];
    for block in blocks(&text)
        .iter()
        .filter(|b| ["sh", "bash", "shell"].contains(&b.lang.as_str()))
    {
        let at = format!("{doc}:{}", block.line);
        if let Some(reason) = &block.skip {
            println!("SKIP {at} ({reason})");
            continue;
        }
        let dir = scratch.join(block.line.to_string());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        std::os::unix::fs::symlink(repo().join("examples"), dir.join("examples"))
            .expect("link to examples/");
        for (d, name, contents) in USER_FILES {
            if *d != doc {
                continue;
            }
            let target = dir.join(name);
            match contents.strip_prefix('@') {
                Some(example) => std::fs::copy(repo().join("examples").join(example), &target)
                    .map(|_| ())
                    .expect("the stand-in example exists"),
                None => std::fs::write(&target, contents).expect("stand-in written"),
            }
        }
        for cmd in commands(block) {
            let at = format!("{doc}:{}", cmd.line);
            if is_default_install(&cmd.text) {
                println!("     {at}: `{}` is the binary under test", cmd.text);
                continue;
            }
            if let Some(k) = LONG_COMMANDS
                .iter()
                .position(|(d, start, _)| *d == doc && cmd.text.starts_with(start))
            {
                long_used[k] = true;
                println!("SKIP {at}: `{}` ({})", cmd.text, LONG_COMMANDS[k].2);
                continue;
            }
            let program = cmd.text.split_whitespace().next().unwrap_or("");
            if program != "nonsmooth" && !FILE_UTILITIES.contains(&program) {
                failures.push(format!(
                    "{at}: `{}` is neither a `nonsmooth` command nor a file utility; mark its \
                     block with <!-- doc-test: skip (reason) --> or list the command in \
                     LONG_COMMANDS",
                    cmd.text
                ));
                continue;
            }
            let start = Instant::now();
            let result = run_shell(&dir, &cmd.text);
            let seconds = start.elapsed().as_secs_f64();
            println!("RUN  {at}: `{}` ({seconds:.1} s)", cmd.text);
            let (ok, stdout, stderr) = match result {
                Ok(r) => r,
                Err(why) => {
                    failures.push(format!("{at}: `{}`: {why}", cmd.text));
                    continue;
                }
            };
            if !ok {
                failures.push(format!(
                    "{at}: `{}` failed:\n{}\n{}",
                    cmd.text,
                    tail(&stdout, 10),
                    tail(&stderr, 20)
                ));
                continue;
            }
            if cmd.notes.trim_start().starts_with("→ JSON")
                && serde_json::from_str::<serde_json::Value>(&stdout).is_err()
            {
                failures.push(format!(
                    "{at}: `{}`: the doc says it prints JSON; it printed:\n{}",
                    cmd.text,
                    tail(&stdout, 10)
                ));
            }
            for name in named_files(&cmd.notes) {
                let path = if name.contains('/') {
                    dir.join(&name)
                } else if let Some(out) = out_dir(without_comment(&cmd.text)) {
                    dir.join(out).join(&name)
                } else {
                    failures.push(format!(
                        "{at}: the doc names `{name}` but the command has no --out folder"
                    ));
                    continue;
                };
                if !path.is_file() {
                    failures.push(format!(
                        "{at}: `{}`: the doc names `{name}`, which it did not write",
                        cmd.text
                    ));
                }
            }
        }
    }
    for (k, (d, start, _)) in LONG_COMMANDS.iter().enumerate() {
        if *d == doc && !long_used[k] {
            failures.push(format!(
                "LONG_COMMANDS names `{start}` in {doc}, which no longer has it"
            ));
        }
    }
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    failures
}

fn check(doc: &str) {
    let failures = run_doc(doc);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The docs with shell blocks: one test each (they run in parallel).
const DOCS: &[&str] = &[
    "README.md",
    "docs/derivatives.md",
    "docs/getting-started.md",
    "docs/grasping.md",
    "docs/impact.md",
    "docs/inverse-dynamics.md",
    "docs/locomotion.md",
    "docs/optimal-control.md",
    "docs/python.md",
    "docs/simulation.md",
    "docs/stability.md",
    "docs/testing.md",
];

#[test]
fn every_doc_with_a_shell_block_is_run() {
    let mut docs = vec!["README.md".to_string()];
    let mut names: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ is readable")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    names.sort();
    docs.extend(names);
    let with_shell: Vec<String> = docs
        .into_iter()
        .filter(|d| {
            let text = std::fs::read_to_string(repo().join(d)).expect("readable");
            blocks(&text)
                .iter()
                .any(|b| ["sh", "bash", "shell"].contains(&b.lang.as_str()))
        })
        .collect();
    assert_eq!(
        with_shell, DOCS,
        "DOCS lists the docs that have shell blocks"
    );
    for (doc, start, _) in LONG_COMMANDS {
        assert!(
            DOCS.contains(doc),
            "LONG_COMMANDS: `{start}` of an unknown doc {doc}"
        );
    }
}

#[test]
fn the_block_parser_reads_markers_continuations_and_claims() {
    let text = "text\n<!-- doc-test: skip (installs) -->\n```sh\npip install x\n```\n\n```sh\n\
                nonsmooth a \\\n    --out o   # lands\n# → o/x.csv (t, q), y.json, plots\n```\n";
    let bs = blocks(text);
    assert_eq!(bs.len(), 2);
    assert_eq!(bs[0].skip.as_deref(), Some("installs"));
    assert_eq!((bs[1].line, bs[1].skip.as_deref()), (7, None));
    let cmds = commands(&bs[1]);
    assert_eq!(cmds.len(), 1);
    assert_eq!(cmds[0].text, "nonsmooth a --out o   # lands");
    assert_eq!(without_comment(&cmds[0].text), "nonsmooth a --out o");
    assert_eq!(out_dir(without_comment(&cmds[0].text)), Some("o"));
    assert_eq!(named_files(&cmds[0].notes), ["o/x.csv", "y.json"]);
}

#[test]
fn readme() {
    check(DOCS[0]);
}

#[test]
fn derivatives() {
    check(DOCS[1]);
}

#[test]
fn getting_started() {
    check(DOCS[2]);
}

#[test]
fn grasping() {
    check(DOCS[3]);
}

#[test]
fn impact() {
    check(DOCS[4]);
}

#[test]
fn inverse_dynamics() {
    check(DOCS[5]);
}

#[test]
fn locomotion() {
    check(DOCS[6]);
}

#[test]
fn optimal_control() {
    check(DOCS[7]);
}

#[test]
fn python() {
    check(DOCS[8]);
}

#[test]
fn simulation() {
    check(DOCS[9]);
}

#[test]
fn stability() {
    check(DOCS[10]);
}

#[test]
fn testing() {
    check(DOCS[11]);
}
