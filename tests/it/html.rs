//! The one-file HTML report, looked at in a real browser: headless Chromium
//! renders what `run --html`, `sweep --html`, `compare --html` and
//! `stripebench report` wrote to a PNG, which must not be blank, and dumps
//! the DOM it built, which must hold the target
//! names, the TOTAL row and the MB/s figures of the JSON document. The file
//! itself must stand alone (no script, no URL, a policy under which no
//! script runs) and escape what it quotes.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{data_file, json, refused, require, sb, LoopBed};
use serde_json::Value;

/// A target name that breaks HTML unless it is escaped.
const EVIL: &str = "t<&\">x.dat";

/// `chromium --headless` with everything that could reach the network or
/// the user's profile off, on `html`, with `args` (`--screenshot=...`,
/// `--dump-dom`); its stdout.
fn chromium(html: &Path, args: &[&str]) -> Vec<u8> {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .arg("180")
        .arg("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(format!("file://{}", html.display()))
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            require(false, &format!("chromium could not run: {e}"));
            unreachable!()
        }
    };
    common::succeeded_as(&out, format_args!("chromium {args:?} failed"));
    out.stdout
}

/// The page rendered to a PNG at 1280 x 2000: (non-white pixels, distinct colours).
fn screenshot(html: &Path, png: &Path) -> (usize, usize) {
    let pixels = render(html, png);
    let mut colours = std::collections::HashSet::new();
    let mut ink = 0;
    for &rgb in &pixels {
        colours.insert(rgb);
        if rgb.0 < 200 || rgb.1 < 200 || rgb.2 < 200 {
            ink += 1;
        }
    }
    (ink, colours.len())
}

/// The page rendered to `png` at 1280 x 2000: its pixels.
fn render(html: &Path, png: &Path) -> Vec<(u8, u8, u8)> {
    let shot = format!("--screenshot={}", png.display());
    chromium(html, &[shot.as_str(), "--window-size=1280,2000"]);
    let file = std::io::BufReader::new(std::fs::File::open(png).unwrap());
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, 2000));
    let channels = info.color_type.samples();
    buf[..info.line_size * info.height as usize]
        .chunks(channels)
        .map(|px| (px[0], px[1], px[2]))
        .collect()
}

/// The text of the DOM Chromium built (tags out, entities decoded).
fn dom_text(html: &Path) -> String {
    let dom = String::from_utf8(chromium(html, &["--dump-dom"])).unwrap();
    assert!(dom.contains("</html>"), "no DOM dumped: {dom}");
    let mut text = String::new();
    let mut in_tag = false;
    for c in dom.chars() {
        match c {
            '<' => {
                in_tag = true;
                text.push(' ');
            }
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// What every report file must be: one page, nothing fetched, no script.
fn stands_alone(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.to_lowercase().contains("<script"), "a script element");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "a URL in the page"
    );
    for attr in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(attr), "the page refers to something: {attr}");
    }
}

/// The figures a report must show: the TOTAL's MB/s and each worker's, as
/// the table rounds them.
fn mbs(v: &Value) -> String {
    format!("{:.1}", v.as_f64().unwrap() / 1e6)
}

#[test]
#[cfg_attr(not(sb_chromium), ignore = "needs chromium (apt-get install chromium)")]
fn run_report_renders_in_chromium_with_the_documents_figures() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), EVIL, 8 << 20);
    let b = data_file(dir.path(), "plain.dat", 8 << 20);
    let html = dir.path().join("r.html");
    let doc = dir.path().join("r.json");
    sb().args([
        "run",
        "--duration",
        "1500ms",
        "--ramp",
        "100ms",
        "--no-progress",
    ])
    .arg("--html")
    .arg(&html)
    .arg("--json")
    .arg(&doc)
    .arg(&a)
    .arg(&b)
    .assert()
    .success();
    let page = std::fs::read_to_string(&html).unwrap();
    stands_alone(&page);
    // The hostile name is escaped wherever it appears, and never raw.
    assert!(page.contains("t&lt;&amp;&quot;&gt;x.dat"));
    assert!(!page.contains(EVIL));
    let d = json(&std::fs::read(&doc).unwrap());

    // `report` renders the same page from the document.
    let again = dir.path().join("again.html");
    sb().args(["report"])
        .arg(&doc)
        .arg("-o")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), page);

    let (ink, colours) = screenshot(&html, &dir.path().join("r.png"));
    // A blank or unstyled page has next to no ink and a handful of colours;
    // this one has tables, two plots and their antialiased lines.
    assert!(ink > 1280 * 2000 / 50, "only {ink} non-white pixels");
    assert!(colours > 50, "only {colours} colours");

    // The page runs no script even where JavaScript is on: its policy
    // forbids it, so a script planted in a copy does not run. (Chromium's
    // headless --screenshot and --dump-dom work through script themselves:
    // with --blink-settings=scriptEnabled=false they write nothing.)
    let planted = dir.path().join("planted.html");
    std::fs::write(
        &planted,
        page.replace(
            "</main>",
            "</main><script>document.body.setAttribute('data-ran', 'y' + 'es')</script>",
        ),
    )
    .unwrap();
    let dom = String::from_utf8(chromium(&planted, &["--dump-dom"])).unwrap();
    assert!(dom.contains("<script>"), "the planted script is in the DOM");
    assert!(
        !dom.contains("data-ran=\"yes\""),
        "a script ran in the page"
    );

    let text = dom_text(&html);
    assert!(text.contains(&format!("{}", a.display())), "{text}");
    assert!(text.contains(&format!("{}", b.display())));
    // The results table's TOTAL row (the first TOTAL followed by figures)
    // starts with the document's MB/s.
    let total = text
        .split("TOTAL")
        .skip(1)
        .map(str::trim_start)
        .find(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        .expect("a TOTAL row in the table");
    assert!(
        total.starts_with(&format!("{} ", mbs(&d["total"]["bytes_per_sec"]))),
        "TOTAL row {:?} vs {}",
        &total[..80.min(total.len())],
        mbs(&d["total"]["bytes_per_sec"])
    );
    for w in d["workers"].as_array().unwrap() {
        assert!(text.contains(&mbs(&w["bytes_per_sec"])), "worker {w}");
    }
    assert!(text.contains("Latency percentiles") && text.contains("Throughput over time"));
    assert!(text.contains("Device counters") || d["targets"][0]["device"].is_null());
}

#[test]
#[cfg_attr(not(sb_chromium), ignore = "needs chromium (apt-get install chromium)")]
fn sweep_report_renders_its_points_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a.dat", 8 << 20);
    let html = dir.path().join("s.html");
    let out = sb()
        .args([
            "sweep",
            "--param",
            "bs=64k,1m",
            "--duration",
            "500ms",
            "--ramp",
            "0",
            "--no-progress",
        ])
        .args(["--json", "-", "--html"])
        .arg(&html)
        .arg(&a)
        .output()
        .unwrap();
    common::succeeded(&out);
    let d = json(&out.stdout);
    let page = std::fs::read_to_string(&html).unwrap();
    stands_alone(&page);
    let (ink, colours) = screenshot(&html, &dir.path().join("s.png"));
    assert!(ink > 1280 * 2000 / 50 && colours > 50, "{ink} {colours}");
    let text = dom_text(&html);
    assert!(text.contains("stripebench sweep"));
    for p in d["points"].as_array().unwrap() {
        assert!(text.contains(&mbs(&p["bytes_per_sec_median"])), "{p}");
    }
    assert!(text.contains("throughput per point"));
}

#[test]
#[cfg_attr(
    not(all(sb_root, sb_mkfs_btrfs, sb_chromium)),
    ignore = "needs root, mkfs.btrfs and chromium"
)]
fn compare_report_shows_members_against_the_volume() {
    let bed = LoopBed::new(2, 160);
    let mnt = tempfile::tempdir().unwrap();
    let _m = common::btrfs_raid0(&bed, mnt.path());
    let out_dir = tempfile::tempdir().unwrap();
    let html = out_dir.path().join("c.html");
    let doc = out_dir.path().join("c.json");
    sb().args([
        "compare",
        "--duration",
        "700ms",
        "--ramp",
        "100ms",
        "--file-size",
        "96m",
        "--no-progress",
    ])
    .arg("--html")
    .arg(&html)
    .arg("--json")
    .arg(&doc)
    .arg(mnt.path())
    .assert()
    .success();
    let page = std::fs::read_to_string(&html).unwrap();
    stands_alone(&page);
    let d = json(&std::fs::read(&doc).unwrap());
    let (ink, colours) = screenshot(&html, &out_dir.path().join("c.png"));
    assert!(ink > 1280 * 2000 / 50 && colours > 50, "{ink} {colours}");
    let text = dom_text(&html);
    assert!(text.contains("Members against the volume"));
    for m in d["members"].as_array().unwrap() {
        assert!(text.contains(m["path"].as_str().unwrap()));
        assert!(text.contains(&mbs(&m["bytes_per_sec"])), "{m}");
    }
    for p in d["phases"].as_array().unwrap() {
        assert!(text.contains(p["name"].as_str().unwrap()));
    }
    assert!(text.contains("btrfs"), "the volume's stack");
}

/// The reason the output is refused before the document is read: a
/// missing directory, the document itself.
#[test]
fn report_refuses_bad_documents_and_outputs_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str, text: &str| -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let out = dir.path().join("out.html");
    let o = out.to_str().unwrap();
    let truncated = p(
        "trunc.json",
        "{\"schema_version\": 1, \"workers\": [{\"id\"",
    );
    let foreign = p("fio.json", "{\"fio version\": \"fio-3.33\", \"jobs\": []}");
    let future = p("v9.json", "{\"schema_version\": 9, \"workers\": []}");
    let plan = p("plan.json", "{\"schema_version\": 1, \"fit\": {}}");
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    refused(&["report", &s(&truncated), "-o", o], "truncated");
    refused(
        &["report", &s(&foreign), "-o", o],
        "not a stripebench document",
    );
    refused(&["report", &s(&future), "-o", o], "schema version 9");
    refused(
        &["report", &s(&plan), "-o", o],
        "run, sweep, compare, merge or findings",
    );
    refused(
        &["report", &s(&dir.path().join("none.json")), "-o", o],
        "cannot read",
    );
    // Outputs are checked before the document is read.
    refused(
        &["report", &s(&foreign), "-o", "/nonexistent-dir/r.html"],
        "does not exist",
    );
    refused(
        &["report", &s(&truncated), "-o", &s(&truncated)],
        "--output",
    );
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_to_string(&truncated).unwrap(),
        "{\"schema_version\": 1, \"workers\": [{\"id\""
    );
}

/// `run --html` to a path that cannot be written is refused before the run.
#[test]
fn html_output_is_checked_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a.dat", 1 << 20);
    let t = a.to_str().unwrap();
    refused(&["run", t, "--html", "/nonexistent-dir/r.html"], "--html");
    refused(&["run", t, "--html", t], "it is a target");
    refused(
        &["run", t, "--html", "-", "--json", "-"],
        "both want stdout",
    );
    refused(
        &[
            "sweep",
            "--param",
            "bs=4k",
            t,
            "--html",
            dir.path().to_str().unwrap(),
        ],
        "is a directory",
    );
}

#[test]
#[cfg_attr(not(sb_chromium), ignore = "needs chromium (apt-get install chromium)")]
fn report_renders_a_merged_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a.dat", 4 << 20);
    let mut docs = Vec::new();
    for name in ["one.json", "two.json"] {
        let doc = dir.path().join(name);
        sb().args([
            "run",
            "--duration",
            "300ms",
            "--ramp",
            "0",
            "--no-progress",
            "--json",
        ])
        .arg(&doc)
        .arg(&a)
        .assert()
        .success();
        docs.push(doc);
    }
    let merged = dir.path().join("m.json");
    // A fleet with a host that sent nothing: the page says it is incomplete.
    sb().arg("merge")
        .args(&docs)
        .args(["--missing", "ghost=unreachable"])
        // Run one after another: not concurrent, merged all the same.
        .arg("--force")
        .arg("--json")
        .arg(&merged)
        .assert()
        .success();
    let html = dir.path().join("m.html");
    sb().arg("report")
        .arg(&merged)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    stands_alone(&std::fs::read_to_string(&html).unwrap());
    let d = json(&std::fs::read(&merged).unwrap());
    let (ink, colours) = screenshot(&html, &dir.path().join("m.png"));
    assert!(ink > 1280 * 2000 / 50 && colours > 50, "{ink} {colours}");
    let text = dom_text(&html);
    // The runs went one after the other (merged with --force): the row says so.
    let fleet = text.split("FLEET").nth(1).expect("a FLEET row");
    let fleet = fleet.trim_start_matches(", not concurrent");
    assert!(
        fleet
            .trim_start()
            .starts_with(&mbs(&d["total"]["bytes_per_sec"])),
        "{fleet:.80}"
    );
    // Two runs of one host are told apart by their documents.
    assert!(text.contains("(one)") && text.contains("(two)"), "{text}");
    assert!(text.contains("1 missing (incomplete)"), "{text}");
    assert!(text.contains("missing: unreachable"), "{text}");
}

/// An SVG's texts as (x, content), circles as (cx, fill) and the strokes
/// of its polylines, read off plotters' markup.
struct Svg {
    texts: Vec<(f64, String)>,
    circles: Vec<(f64, String)>,
    polyline_strokes: Vec<String>,
    width: f64,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let k = format!(" {name}=\"");
    let i = tag.find(&k)? + k.len();
    Some(tag[i..i + tag[i..].find('"')?].to_string())
}

fn parse_svg(svg: &str) -> Svg {
    let tags = |open: &str| -> Vec<(String, usize)> {
        svg.match_indices(open)
            .map(|(i, _)| {
                let end = i + svg[i..].find('>').unwrap();
                (svg[i..=end].to_string(), end + 1)
            })
            .collect()
    };
    let texts = tags("<text ")
        .into_iter()
        .map(|(t, end)| {
            let body = &svg[end..end + svg[end..].find("</text>").unwrap()];
            (
                attr(&t, "x").unwrap().parse().unwrap(),
                body.trim().to_string(),
            )
        })
        .collect();
    let circles = tags("<circle ")
        .into_iter()
        .map(|(t, _)| {
            (
                attr(&t, "cx").unwrap().parse().unwrap(),
                attr(&t, "fill").unwrap(),
            )
        })
        .collect();
    let polyline_strokes = tags("<polyline ")
        .into_iter()
        .filter_map(|(t, _)| attr(&t, "stroke"))
        .collect();
    let (svg_tag, _) = tags("<svg ").remove(0);
    Svg {
        texts,
        circles,
        polyline_strokes,
        width: attr(&svg_tag, "width").unwrap().parse().unwrap(),
    }
}

/// `sweep ARGS --plot s.svg --html s.html --json -` over `targets`: (document, svg, html path).
fn sweep_with_plot(dir: &Path, args: &[&str], targets: &[PathBuf]) -> (Value, String, PathBuf) {
    let svg = dir.join("s.svg");
    let html = dir.join("s.html");
    let out = sb()
        .arg("sweep")
        .args(args)
        .args(["--duration", "200ms", "--ramp", "0", "--no-progress"])
        .args(["--json", "-", "--plot"])
        .arg(&svg)
        .arg("--html")
        .arg(&html)
        .args(targets)
        .output()
        .unwrap();
    common::succeeded(&out);
    (
        json(&out.stdout),
        std::fs::read_to_string(&svg).unwrap(),
        html,
    )
}

#[test]
fn sweep_plot_draws_latency_on_a_log_axis_in_ms_and_categories_without_lines() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a.dat", 4 << 20);
    let b = data_file(dir.path(), "b.dat", 4 << 20);
    let (_, svg, _) = sweep_with_plot(
        dir.path(),
        &["--param", "mode=direct,buffered", "--bs", "64k"],
        &[a, b],
    );
    let s = parse_svg(&svg);
    let texts: Vec<&str> = s.texts.iter().map(|(_, t)| t.as_str()).collect();
    assert!(texts.contains(&"p99 (ms, log scale)"), "{texts:?}");
    // Decade ticks in ms: 0.1 ms, 1 ms, 10 ms ...; no latency in us.
    let ticks: Vec<f64> = texts
        .iter()
        .filter_map(|t| t.strip_suffix(" ms")?.parse().ok())
        .collect();
    assert!(ticks.len() >= 2, "no ms ticks: {texts:?}");
    for t in &ticks {
        let l = t.log10();
        assert!((l - l.round()).abs() < 1e-9, "tick {t} ms is not a decade");
    }
    // A tick in us would read "<number> us" or "<number> µs"; a legend label
    // holds a temporary directory's random name, which may hold "us".
    assert!(
        !texts.iter().any(|t| {
            [" us", " µs"]
                .iter()
                .any(|u| t.strip_suffix(u).is_some_and(|n| n.parse::<f64>().is_ok()))
        }),
        "{texts:?}"
    );
    // Categories: points, and no data line joins them.
    let fills: std::collections::HashSet<&str> =
        s.circles.iter().map(|(_, f)| f.as_str()).collect();
    assert!(!fills.is_empty());
    let joined: Vec<&String> = s
        .polyline_strokes
        .iter()
        .filter(|st| fills.contains(st.as_str()))
        .collect();
    assert!(joined.is_empty(), "categorical points joined: {joined:?}");
}

#[test]
fn sweep_plot_makes_one_distinct_series_per_second_parameter_value_with_the_legend_outside() {
    let dir = tempfile::tempdir().unwrap();
    let targets: Vec<PathBuf> = ["a.dat", "b.dat", "c.dat"]
        .iter()
        .map(|n| data_file(dir.path(), n, 2 << 20))
        .collect();
    // 3 targets and the total, for each of 3 values of jobs: 12 series.
    let (d, svg, _) = sweep_with_plot(
        dir.path(),
        &["--param", "bs=16k,64k", "--param", "jobs=1,2,3"],
        &targets,
    );
    assert_eq!(d["points"].as_array().unwrap().len(), 6);
    let s = parse_svg(&svg);
    let texts: Vec<&str> = s.texts.iter().map(|(_, t)| t.as_str()).collect();
    for j in 1..=3 {
        assert!(
            texts.contains(&format!("total jobs={j}").as_str()),
            "{texts:?}"
        );
        assert!(
            texts.contains(&format!("p99 jobs={j}").as_str()),
            "{texts:?}"
        );
    }
    // No flattened labels such as 16k/1 (looked for by the values swept, not
    // by "k/", which a temporary directory's random name can hold).
    assert!(
        !texts
            .iter()
            .any(|t| ["16k/", "64k/"].iter().any(|f| t.contains(f))),
        "{texts:?}"
    );
    // Numbers: a line joins each series.
    let data_fills: Vec<&str> = s.circles.iter().map(|(_, f)| f.as_str()).collect();
    assert!(s
        .polyline_strokes
        .iter()
        .any(|st| data_fills.contains(&st.as_str())));
    // The legend's labels lie right of every point drawn on the plots.
    let legend_x: Vec<f64> = s
        .texts
        .iter()
        .filter(|(_, t)| t.contains("jobs="))
        .map(|(x, _)| *x)
        .collect();
    assert_eq!(legend_x.len(), 12 + 3, "{texts:?}");
    let legend_left = legend_x.iter().cloned().fold(f64::MAX, f64::min);
    let plot_points: Vec<f64> = s
        .circles
        .iter()
        .map(|(x, _)| *x)
        .filter(|x| *x < legend_left - 30.0)
        .collect();
    assert!(plot_points.len() >= 6 * 4, "{:?}", s.circles);
    let max_point = plot_points.iter().cloned().fold(0.0, f64::max);
    assert!(
        max_point + 40.0 < legend_left && legend_left < s.width,
        "legend at {legend_left}, points up to {max_point}"
    );
    // 12 series, 12 colours in the legend's markers.
    let throughput_colours: std::collections::HashSet<&str> = s
        .circles
        .iter()
        .filter(|(x, _)| *x > max_point + 10.0)
        .map(|(_, f)| f.as_str())
        .collect();
    assert!(throughput_colours.len() >= 12, "{throughput_colours:?}");
}

#[test]
#[cfg_attr(not(sb_chromium), ignore = "needs chromium (apt-get install chromium)")]
fn sweep_report_shows_dev_app_cpu_per_gb_warnings_and_each_points_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let a = data_file(dir.path(), "a.dat", 4 << 20);
    // More workers than CPUs at the second point: a warning, whatever the machine.
    let cpus = std::thread::available_parallelism().unwrap().get();
    let jobs = format!("jobs=1,{}", cpus + 1);
    let (d, _, html) = sweep_with_plot(dir.path(), &["--param", &jobs], &[a]);
    let warned = &d["points"][1]["runs"][0]["warnings"];
    let warning = warned
        .as_array()
        .unwrap()
        .iter()
        .map(|w| crate::common::warning_text(w).unwrap())
        .find(|w| w.contains("share"))
        .unwrap_or_else(|| panic!("no CPU-sharing warning: {warned}"))
        .to_string();
    let page = std::fs::read_to_string(&html).unwrap();
    stands_alone(&page);
    let text = dom_text(&html);
    for col in ["CPU s/GB", "dev/app", "warnings"] {
        assert!(text.contains(col), "no {col} column");
    }
    let t = &d["points"][0]["runs"][0]["total"];
    let per_gb = (t["cpu_usr_sec"].as_f64().unwrap() + t["cpu_sys_sec"].as_f64().unwrap())
        / (t["bytes"].as_f64().unwrap() / 1e9);
    assert!(
        text.contains(&format!("{per_gb:.3}")),
        "CPU s/GB {per_gb:.3}"
    );
    let jobs_n = cpus + 1;
    assert!(
        text.contains(&format!("warning: jobs={jobs_n}: {warning}")),
        "the point's warning is not listed"
    );
    // Per point: the options that differ (jobs is swept; the seed differs too).
    assert!(text.contains("Configuration per point (the options that differ)"));
    let diff_rows = page.matches("<tr class=\"config-diff\">").count();
    assert_eq!(diff_rows, 2);
}

/// Issue 42: 64 targets drew 64 overlapping lines and a legend of 64 names
/// over the next chart. From 17 members the plot and the page draw a
/// heatmap (a row per target, sorted by rate) and the members sorted with
/// compare's slow-member fence, whose value is the analysis' own.
#[test]
fn many_targets_draw_a_heatmap_and_the_sorted_members_with_the_verdict_s_fence() {
    use stripebench::analysis::slow_member::{judge, Figure, Sample};
    let dir = tempfile::tempdir().unwrap();
    let mut targets: Vec<PathBuf> = (0..20)
        .map(|i| data_file(dir.path(), &format!("m{i}.dat"), 1 << 20))
        .collect();
    targets.push(data_file(dir.path(), EVIL, 1 << 20));
    let (svg, html, doc) = (
        dir.path().join("p.svg"),
        dir.path().join("p.html"),
        dir.path().join("p.json"),
    );
    sb().args(["run", "--duration", "2s", "--ramp", "100ms", "--bs", "64k"])
        .args(["--no-progress", "--plot"])
        .arg(&svg)
        .arg("--html")
        .arg(&html)
        .arg("--json")
        .arg(&doc)
        .args(&targets)
        .assert()
        .success();
    let d = json(&std::fs::read(&doc).unwrap());
    let plot = std::fs::read_to_string(&svg).unwrap();
    let x = roxmltree::Document::parse(&plot).expect("the plot is well-formed XML");
    assert!(!plot.contains(EVIL) && plot.contains("t&lt;&amp;&quot;&gt;x.dat"));
    let texts: Vec<String> = (x.descendants())
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::to_string))
        .collect();
    // A row per target, named with its rank, slowest first, as the JSON rates them.
    let rows: Vec<&String> = texts.iter().filter(|t| t.starts_with('#')).collect();
    assert_eq!(rows.len(), 21, "{rows:?}");
    let mut rated: Vec<(f64, String)> = (d["targets"].as_array().unwrap().iter())
        .map(|t| {
            (
                t["bytes_per_sec"].as_f64().unwrap(),
                t["path"].as_str().unwrap().into(),
            )
        })
        .collect();
    rated.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    for (k, (rate, path)) in rated.iter().enumerate() {
        assert_eq!(*rows[k], format!("#{} {path} {:.1}", k + 1, rate / 1e6));
    }
    // The fence: compare's rule over the targets' figures, the workers crowding the CPUs.
    let figures: Vec<(String, Option<Figure>)> = (d["targets"].as_array().unwrap().iter())
        .map(|t| {
            let p = t["path"].as_str().unwrap().to_string();
            let p99 = t["latency_ns"]["p99"].as_u64();
            let s = Sample::measured(
                t["bytes_per_sec"].as_f64().unwrap(),
                p99,
                t["ios"].as_u64().unwrap(),
            );
            let f = Figure::of(&p, &[s]);
            (p, f)
        })
        .collect();
    let (w, c) = (21, d["host"]["cpus"].as_u64().unwrap() as usize);
    let v = judge(&figures, "together", (w > c).then_some((w, c)));
    match v.rate {
        Some(f) => {
            let fence = format!("fence {:.1}", f.threshold / 1e6);
            assert!(texts.contains(&fence), "{fence} not in {texts:?}");
        }
        None => assert!(texts.iter().any(|t| t.starts_with("no fence")), "{texts:?}"),
    }
    assert!(
        !texts.iter().any(|t| t.contains("per worker")),
        "no line chart"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    stands_alone(&page);
    assert!(!page.contains(EVIL));
    assert!(page.contains("slowest on top") && page.contains("with the verdict's fence"));
}
