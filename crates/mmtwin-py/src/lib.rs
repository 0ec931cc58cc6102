//! Python bindings (`mmtwin._core`): resolve a scenario, run one iteration of one kernel's
//! configuration (one kernel × one workload).
//! Thin by design: everything with behaviour lives in the `mmtwin` crate.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use mmtwin::config::scenario::{RunConfig, Scenario};
use mmtwin::config::ConfigError;
use mmtwin::workloads::Preferred;

create_exception!(_core, ScenarioError, PyValueError, "A scenario is invalid: args are (key, message).");
create_exception!(_core, SimulationError, PyRuntimeError, "A run could not finish (the simulation hung); no figures.");

fn scenario_error(e: ConfigError) -> PyErr {
    ScenarioError::new_err((e.key, e.message))
}

/// Parses and validates scenario text; returns one dict per benchmark (workload) with its
/// results name, MMTests benchmark name and its kernels (name, profile, resolved TOML, sha256),
/// plus the scenario-wide facts the CLI needs. A scenario with a single workload also has that
/// workload's `benchmark` and `kernels` at the top level.
/// `iterations` overrides `[scenario] iterations` (the resolved configs record the override).
#[pyfunction]
#[pyo3(signature = (text, iterations=None))]
fn resolve_scenario<'py>(py: Python<'py>, text: &str, iterations: Option<u32>) -> PyResult<Bound<'py, PyDict>> {
    let mut s = Scenario::parse(text).map_err(scenario_error)?;
    if let Some(n) = iterations {
        if n == 0 {
            return Err(scenario_error(ConfigError::new("scenario.iterations", "must be at least 1")));
        }
        s.set_iterations(n);
    }
    let out = PyDict::new(py);
    let benchmarks = PyList::empty(py);
    let groups = s.resolve_by_workload();
    let single = groups.len() == 1;
    for cfgs in groups {
        let w = &cfgs[0].workload;
        let kernels = PyList::empty(py);
        for cfg in &cfgs {
            let d = PyDict::new(py);
            d.set_item("name", &cfg.kernel.name)?;
            d.set_item("profile", serde_name(&cfg.kernel.profile))?;
            d.set_item("toml", cfg.to_toml())?;
            d.set_item("sha256", cfg.hash())?;
            kernels.append(d)?;
        }
        let b = PyDict::new(py);
        b.set_item("name", &cfgs[0].results_name)?;
        b.set_item("benchmark", w.benchmark())?;
        b.set_item("kernels", &kernels)?;
        b.set_item("iterations", cfgs[0].scenario.iterations)?;
        if single {
            out.set_item("benchmark", w.benchmark())?;
            out.set_item("kernels", kernels)?;
        }
        benchmarks.append(b)?;
    }
    out.set_item("benchmarks", benchmarks)?;
    out.set_item("name", &s.scenario.name)?;
    out.set_item("iterations", s.scenario.iterations)?;
    out.set_item("twin_bytes", s.machine.twin_bytes())?;
    Ok(out)
}

fn serde_name<T: serde::Serialize>(v: &T) -> String {
    match toml::Value::try_from(v) {
        Ok(toml::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// Runs iteration `iteration` of a resolved kernel config. `progress`, if given, is called with
/// the fraction done. The GIL is released while the simulation runs.
#[pyfunction]
#[pyo3(signature = (resolved_toml, iteration, progress=None))]
fn run_iteration<'py>(py: Python<'py>, resolved_toml: &str, iteration: u32, progress: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    let cfg = RunConfig::parse(resolved_toml).map_err(scenario_error)?;
    let r = py.allow_threads(|| {
        let mut last = -1.0f64;
        let mut cb = |f: f64| {
            if let Some(p) = &progress {
                if f - last >= 0.01 || f >= 1.0 {
                    last = f;
                    Python::with_gil(|py| {
                        let _ = p.call1(py, (f,));
                    });
                }
            }
        };
        mmtwin::run::run_iteration(&cfg, iteration, &mut cb)
    })
    .map_err(|e| SimulationError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("iteration", r.iteration)?;
    d.set_item("seed", r.seed)?;
    d.set_item("user_ns", r.user_ns)?;
    d.set_item("system_ns", r.system_ns)?;
    d.set_item("kswapd_ns", r.kswapd_ns)?;
    d.set_item("others_ns", r.others_ns)?;
    d.set_item("kswapd_wait_ns", r.kswapd_wait_ns)?;
    d.set_item("elapsed_ns", r.elapsed_ns)?;
    d.set_item("events_processed", r.events_processed)?;
    d.set_item("page_events", r.page_events)?;
    d.set_item("vmstat", r.vmstat_delta.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>())?;
    let tl = PyDict::new(py);
    tl.set_item("time_ns", &r.timeline_ns)?;
    tl.set_item("names", &r.timeline_names)?;
    tl.set_item("rows", &r.timeline)?;
    d.set_item("timeline", tl)?;
    let metrics = PyList::empty(py);
    for m in &r.metrics {
        let md = PyDict::new(py);
        md.set_item("table", &m.table)?;
        md.set_item("preferred", if m.preferred == Preferred::Lower { "lower" } else { "higher" })?;
        md.set_item("unit", &m.unit)?;
        md.set_item("op", &m.op)?;
        md.set_item("value", m.value)?;
        metrics.append(md)?;
    }
    d.set_item("metrics", metrics)?;
    let dumps = PyList::empty(py);
    for p in &r.dumps {
        let pd = PyDict::new(py);
        pd.set_item("time_ns", p.time_ns)?;
        pd.set_item("buddyinfo", &p.buddyinfo)?;
        pd.set_item("pagetypeinfo", &p.pagetypeinfo)?;
        pd.set_item("zoneinfo", &p.zoneinfo)?;
        pd.set_item("vmstat", &p.vmstat)?;
        dumps.append(pd)?;
    }
    d.set_item("dumps", dumps)?;
    let mut t = mmtwin::block::DiskStats::default();
    for (_, s) in &r.disks {
        t.add(s);
    }
    let b = PyDict::new(py);
    b.set_item("devices", r.disks.len())?;
    b.set_item("requests", t.requests.to_vec())?;
    b.set_item("sectors", t.sectors.to_vec())?;
    b.set_item("merges", t.merges.to_vec())?;
    b.set_item("segments", t.segments.to_vec())?;
    b.set_item("seeks", t.seeks)?;
    b.set_item("seek_dist_hist", t.seek_dist_hist.to_vec())?;
    b.set_item("seek_ns", t.seek_ns)?;
    b.set_item("busy_ns", t.busy_ns)?;
    b.set_item("merge_refused_segments", t.merge_refused_segments)?;
    b.set_item("journal_commits", t.journal_commits)?;
    b.set_item("journal_blocks", t.journal_blocks)?;
    b.set_item("checkpoint_blocks", t.checkpoint_blocks)?;
    b.set_item("ordered_data_pages", t.ordered_data_pages)?;
    b.set_item("shadow_waits", t.shadow_waits)?;
    b.set_item("shadow_ns", t.shadow_ns)?;
    b.set_item("ftl_gc_copies", t.ftl.gc_copies)?;
    b.set_item("ftl_gc_copied_pages", t.ftl.gc_copied_pages)?;
    b.set_item("cfq_slices", t.cfq.slices)?;
    b.set_item("cfq_preemptions", t.cfq.preemptions)?;
    b.set_item("cfq_idle_waits", t.cfq.idle_waits)?;
    b.set_item("cfq_idle_expired", t.cfq.idle_expired)?;
    b.set_item("buffers_pages", t.buffers_pages)?;
    b.set_item("metadata_reads", t.metadata_reads)?;
    b.set_item("dir_reads", t.dir_reads)?;
    b.set_item("i_mutex_waits", t.i_mutex_waits)?;
    b.set_item("i_mutex_wait_ns", t.i_mutex_wait_ns)?;
    b.set_item("rq_size_hist", t.rq_size_hist.iter().map(|h| h.to_vec()).collect::<Vec<_>>())?;
    b.set_item("rq_seg_hist", t.rq_seg_hist.iter().map(|h| h.to_vec()).collect::<Vec<_>>())?;
    b.set_item("congestion_waits", r.congestion_waits.to_vec())?;
    b.set_item("congestion_wait_ns", r.congestion_wait_ns.to_vec())?;
    b.set_item("wait_ns", r.waits.ns.iter().map(|w| w.to_vec()).collect::<Vec<_>>())?;
    b.set_item("wait_count", r.waits.count.iter().map(|w| w.to_vec()).collect::<Vec<_>>())?;
    d.set_item("block", b)?;
    Ok(d)
}

/// The /proc dumps of a resolved kernel config right after boot.
#[pyfunction]
fn boot_dump<'py>(py: Python<'py>, resolved_toml: &str) -> PyResult<Bound<'py, PyDict>> {
    let cfg = RunConfig::parse(resolved_toml).map_err(scenario_error)?;
    let mm = mmtwin::mm::Mm::boot(&cfg);
    let d = PyDict::new(py);
    d.set_item("buddyinfo", mm.proc_buddyinfo())?;
    d.set_item("pagetypeinfo", mm.proc_pagetypeinfo())?;
    d.set_item("zoneinfo", mm.proc_zoneinfo())?;
    d.set_item("vmstat", mm.proc_vmstat())?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_iteration, m)?)?;
    m.add_function(wrap_pyfunction!(boot_dump, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type::<SimulationError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
