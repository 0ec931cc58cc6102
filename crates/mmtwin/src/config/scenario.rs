//! The scenario file and its resolution into one `RunConfig` per (workload, kernel) pair.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::machine::MachineSpec;
use super::profile::{PolicyOverrides, Profile};
use super::size::Duration;
use super::sysctl::{SysctlOverrides, VmSysctl};
use super::ConfigError;
use crate::mm::policy::MmPolicy;
use crate::mm::vmstat::Era;
use crate::sim::cost::CostTable;
use crate::workloads::WorkloadSpec;

/// `[scenario]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioMeta {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The seed of iteration 0; iteration i uses a seed derived from (seed, i).
    #[serde(default = "one")]
    pub seed: u64,
    /// Runs of each workload and kernel; in a resolved `RunConfig`, that workload's own count
    /// (`WorkloadEntry::iterations`) if it has one.
    #[serde(default = "one_u32")]
    pub iterations: u32,
}

fn one() -> u64 {
    1
}
fn one_u32() -> u32 {
    1
}

/// One `[[kernel]]` entry: a name for the report column, a profile, and overrides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSpec {
    pub name: String,
    pub profile: Profile,
    #[serde(default)]
    pub sysctl: SysctlOverrides,
    #[serde(default)]
    pub policy: PolicyOverrides,
    /// CONFIG_HZ, the timer tick's rate (jiffies per second): 100, 250, 300 or 1000; by
    /// default the architecture's (`Arch::default_hz`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hz: Option<Hz>,
}

/// A CONFIG_HZ value (kernel/Kconfig.hz offers these four).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "u32")]
pub struct Hz(pub u32);

impl TryFrom<i64> for Hz {
    type Error = String;
    fn try_from(v: i64) -> Result<Hz, String> {
        match v {
            100 | 250 | 300 | 1000 => Ok(Hz(v as u32)),
            _ => Err(format!("CONFIG_HZ {v} is not one Kconfig offers; valid: 100, 250, 300, 1000")),
        }
    }
}

impl From<Hz> for u32 {
    fn from(h: Hz) -> u32 {
        h.0
    }
}

/// `[sampling]`: how often vmstat timelines are sampled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Sampling {
    /// vmstat timeline sampling interval.
    pub interval: Duration,
    /// Simulated times at which to dump /proc/buddyinfo, pagetypeinfo, zoneinfo and vmstat.
    pub dump_at: Vec<Duration>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling { interval: Duration(100_000_000), dump_at: Vec::new() }
    }
}

/// One workload as written: its definition, and how many iterations it runs when that is not
/// the scenario's count (an MMTests config gives each benchmark its own count: fs_mark's loops
/// are its samples within one run, a copy benchmark needs runs of its own).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadEntry {
    pub spec: WorkloadSpec,
    /// `iterations` in the workload's table; `[scenario] iterations` if absent.
    pub iterations: Option<u32>,
}

impl Serialize for WorkloadEntry {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            iterations: Option<u32>,
            #[serde(flatten)]
            spec: &'a WorkloadSpec,
        }
        Out { iterations: self.iterations, spec: &self.spec }.serialize(ser)
    }
}

/// A workload table with its `iterations` key taken out, the rest read as the workload's
/// definition: the other keys pass through as they come, so an error still names its entry.
struct TakeIterations<'a, A> {
    map: A,
    iterations: &'a mut Option<u32>,
}

impl<'de, A: serde::de::MapAccess<'de>> serde::de::MapAccess<'de> for TakeIterations<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        use serde::de::IntoDeserializer;
        loop {
            let Some(key) = self.map.next_key::<String>()? else { return Ok(None) };
            if key == "iterations" {
                let n: u32 = self.map.next_value()?;
                if n == 0 {
                    return Err(serde::de::Error::custom("iterations must be at least 1"));
                }
                *self.iterations = Some(n);
                continue;
            }
            return seed.deserialize(key.into_deserializer()).map(Some);
        }
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

impl<'de> Deserialize<'de> for WorkloadEntry {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = WorkloadEntry;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a workload table")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<WorkloadEntry, A::Error> {
                let mut iterations = None;
                let spec = WorkloadSpec::deserialize(serde::de::value::MapAccessDeserializer::new(TakeIterations { map, iterations: &mut iterations }))?;
                Ok(WorkloadEntry { spec, iterations })
            }
        }
        de.deserialize_map(V)
    }
}

/// The scenario's benchmarks: one `[workload]` table, or an array of `[[workload]]` tables that
/// run one after another like the tests of an MMTests config.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Workloads {
    /// `[workload]`.
    One(WorkloadEntry),
    /// `[[workload]]` entries, in scenario order.
    Many(Vec<WorkloadEntry>),
}

impl Workloads {
    pub fn as_slice(&self) -> &[WorkloadEntry] {
        match self {
            Workloads::One(w) => std::slice::from_ref(w),
            Workloads::Many(ws) => ws,
        }
    }

    /// The key path of entry `i` as written in the file: "workload" or "workload[i]".
    fn key(&self, i: usize) -> String {
        match self {
            Workloads::One(_) => "workload".to_string(),
            Workloads::Many(_) => format!("workload[{i}]"),
        }
    }
}

/// Dispatches on what `workload` is in the file, so that errors inside a single table read as
/// they always did ("workload: ...") and errors inside an array entry name it ("workload[1]: ...").
impl<'de> Deserialize<'de> for Workloads {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Workloads;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a [workload] table or an array of [[workload]] tables")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Workloads, A::Error> {
                WorkloadEntry::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Workloads::One)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Workloads, A::Error> {
                Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(Workloads::Many)
            }
        }
        de.deserialize_any(V)
    }
}

/// `[matrix]`: the machine variants a scenario's workloads run on, as an MMTests config is run
/// once per memory size (mem=) and test file system. Every combination of the listed values
/// runs every workload; its results are named "<benchmark>-<mem>-<fs>" (for the dimensions
/// listed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    /// mem= boot parameters.
    #[serde(default)]
    pub mem: Vec<crate::config::size::Bytes>,
    /// File system types.
    #[serde(default)]
    pub fs: Vec<crate::fs::FsType>,
}

impl Matrix {
    pub fn is_empty(&self) -> bool {
        self.mem.is_empty() && self.fs.is_empty()
    }
}

/// A scenario file as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub scenario: ScenarioMeta,
    pub machine: MachineSpec,
    #[serde(rename = "kernel")]
    pub kernels: Vec<KernelSpec>,
    pub workload: Workloads,
    /// Machine variants every workload runs on (each a benchmark of its own in the results).
    #[serde(default, skip_serializing_if = "Matrix::is_empty")]
    pub matrix: Matrix,
    #[serde(default)]
    pub costs: CostTable,
    #[serde(default)]
    pub sampling: Sampling,
}

/// A kernel with everything resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolvedKernel {
    pub name: String,
    pub profile: Profile,
    pub era: Era,
    pub sysctl: VmSysctl,
    pub policy: MmPolicy,
    /// CONFIG_HZ.
    #[serde(default = "default_hz")]
    pub hz: u32,
}

/// A stored config from before `hz` was resolved ran at the default architecture's rate.
fn default_hz() -> u32 {
    super::machine::Arch::default().default_hz()
}

/// Everything one kernel's run of one workload depends on. A run is a pure function of this and
/// the iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The benchmark's name in results: `WorkloadSpec::benchmark()`, with "-2", "-3", … for the
    /// second, third, … workload of the scenario with the same benchmark.
    pub results_name: String,
    pub scenario: ScenarioMeta,
    pub machine: MachineSpec,
    pub kernel: ResolvedKernel,
    pub workload: WorkloadSpec,
    pub costs: CostTable,
    pub sampling: Sampling,
}

/// Deserializes TOML text into `T`, reporting the key path of the first problem.
fn from_toml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| syntax_error(&e, text))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        let inner = e.into_inner();
        let msg = inner.message().to_string();
        ConfigError::new(if key == "." { String::new() } else { key }, msg)
    })
}

/// A one-line syntax error: "TOML syntax error at line L, column C: message".
fn syntax_error(e: &toml::de::Error, text: &str) -> ConfigError {
    let msg = e.message().trim().replace('\n', "; ");
    ConfigError::new("", match e.span() {
        Some(span) => {
            let (line, col) = line_col(text, span.start);
            format!("TOML syntax error at line {line}, column {col}: {msg}")
        }
        None => format!("TOML syntax error: {msg}"),
    })
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

impl Scenario {
    /// Parses and checks a scenario file's text.
    pub fn parse(text: &str) -> Result<Scenario, ConfigError> {
        let s: Scenario = from_toml(text)?;
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.kernels.is_empty() {
            return Err(ConfigError::new("kernel", "the scenario needs at least one [[kernel]] entry"));
        }
        for (i, k) in self.kernels.iter().enumerate() {
            if k.name.is_empty() || k.name.contains(['/', '\\']) || k.name.starts_with('.') {
                return Err(ConfigError::new(format!("kernel[{i}].name"), format!("{:?} is not usable as a results folder name", k.name)));
            }
            if self.kernels[..i].iter().any(|o| o.name == k.name) {
                return Err(ConfigError::new(format!("kernel[{i}].name"), format!("two kernels are named {:?}; names label report columns and must differ", k.name)));
            }
        }
        if self.scenario.iterations == 0 {
            return Err(ConfigError::new("scenario.iterations", "must be at least 1"));
        }
        if self.sampling.interval.0 < 1_000_000 {
            return Err(ConfigError::new("sampling.interval", "must be at least 1ms"));
        }
        self.machine.layout()?;
        if self.workloads().is_empty() {
            return Err(ConfigError::new("workload", "the scenario needs at least one workload; the [[workload]] array is empty"));
        }
        for (j, (_, machine)) in self.machine_variants().iter().enumerate() {
            let layout = machine.layout().map_err(|e| match e.key.strip_prefix("machine.mem") {
                Some(rest) => ConfigError::new(format!("matrix.mem[{}]{rest}", j / self.matrix.fs.len().max(1)), e.message),
                None => e,
            })?;
            for (i, w) in self.workloads().iter().enumerate() {
                // A workload reports keys as "workload.<field>"; name the array entry instead.
                w.spec.validate(&layout).map_err(|e| match e.key.strip_prefix("workload") {
                    Some(rest) => ConfigError::new(format!("{}{rest}", self.workload.key(i)), e.message),
                    None => e,
                })?;
            }
        }
        Ok(())
    }

    /// The machines the workloads run on: the `[machine]` itself, or one per combination of the
    /// `[matrix]` values (mem outer, fs inner), each with its results-name suffix.
    pub fn machine_variants(&self) -> Vec<(String, MachineSpec)> {
        let mems: Vec<Option<crate::config::size::Bytes>> =
            if self.matrix.mem.is_empty() { vec![self.machine.mem] } else { self.matrix.mem.iter().map(|m| Some(*m)).collect() };
        let fss: Vec<crate::fs::FsType> = if self.matrix.fs.is_empty() { vec![self.machine.fs] } else { self.matrix.fs.clone() };
        let mut out = Vec::new();
        for mem in &mems {
            for fs in &fss {
                let mut m = self.machine.clone();
                m.mem = *mem;
                m.fs = *fs;
                let mut suffix = String::new();
                if let (false, Some(b)) = (self.matrix.mem.is_empty(), mem) {
                    suffix += &format!("-{}", crate::config::size::format_bytes(b.0));
                }
                if !self.matrix.fs.is_empty() {
                    suffix += &format!("-{}", toml::Value::try_from(fs).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default());
                }
                out.push((suffix, m));
            }
        }
        out
    }

    /// The workloads in scenario order (one for a `[workload]` table).
    pub fn workloads(&self) -> &[WorkloadEntry] {
        self.workload.as_slice()
    }

    /// Runs every workload `n` times (`--iterations`): the scenario's count and each
    /// workload's own.
    pub fn set_iterations(&mut self, n: u32) {
        self.scenario.iterations = n;
        match &mut self.workload {
            Workloads::One(w) => w.iterations = None,
            Workloads::Many(ws) => ws.iter_mut().for_each(|w| w.iterations = None),
        }
    }

    /// The results name of each group (machine variant × workload), in order: the benchmark
    /// name and the variant's suffix, with "-2", "-3", … appended for the second, third, …
    /// workload of the same benchmark.
    pub fn results_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for (suffix, _) in self.machine_variants() {
            for w in self.workloads() {
                let base = format!("{}{suffix}", w.spec.benchmark());
                let mut name = base.clone();
                let mut n = 1;
                while names.contains(&name) {
                    n += 1;
                    name = format!("{base}-{n}");
                }
                names.push(name);
            }
        }
        names
    }

    /// One resolved configuration per (machine variant, workload, kernel): the kernels of the
    /// first workload in scenario order, then those of the second, and so on, for each machine
    /// variant in turn.
    pub fn resolve(&self) -> Vec<RunConfig> {
        self.resolve_by_workload().into_iter().flatten().collect()
    }

    /// The resolved configurations grouped by benchmark (machine variant × workload): one list
    /// of per-kernel configurations (in scenario order) per group.
    pub fn resolve_by_workload(&self) -> Vec<Vec<RunConfig>> {
        let mut names = self.results_names().into_iter();
        let mut out = Vec::new();
        for (_, mut machine) in self.machine_variants() {
            machine.resolve();
            let layout = machine.layout().expect("validated");
            for w in self.workloads() {
                let name = names.next().expect("one name per group");
                let iterations = w.iterations.unwrap_or(self.scenario.iterations);
                out.push(self.resolve_workload(&machine, w.spec.resolved(&layout), iterations, name));
            }
        }
        out
    }

    /// One configuration per kernel of `workload`, run `iterations` times.
    fn resolve_workload(&self, machine: &MachineSpec, workload: WorkloadSpec, iterations: u32, results_name: String) -> Vec<RunConfig> {
        self.kernels
            .iter()
            .map(|k| RunConfig {
                results_name: results_name.clone(),
                scenario: ScenarioMeta { iterations, ..self.scenario.clone() },
                machine: machine.clone(),
                kernel: ResolvedKernel {
                    name: k.name.clone(),
                    profile: k.profile,
                    era: k.profile.era(),
                    sysctl: k.sysctl.apply(&k.profile.sysctl()),
                    policy: k.policy.apply(k.profile.alloc_policy()),
                    hz: k.hz.map_or(machine.arch.default_hz(), u32::from),
                },
                workload: workload.clone(),
                costs: self.costs,
                sampling: self.sampling.clone(),
            })
            .collect()
    }
}

impl RunConfig {
    /// The resolved configuration as TOML (what a results folder stores).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a RunConfig always serializes")
    }

    /// Reads a resolved configuration back.
    pub fn parse(text: &str) -> Result<RunConfig, ConfigError> {
        let c: RunConfig = from_toml(text)?;
        c.machine.layout()?;
        Ok(c)
    }

    /// sha256 (hex) of the resolved TOML text.
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.to_toml().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The seed of iteration `i` (splitmix64 of the scenario seed and the iteration).
    pub fn iteration_seed(&self, i: u32) -> u64 {
        crate::sim::rng::splitmix64(self.scenario.seed ^ (u64::from(i)).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
[scenario]
name = "t"
[machine]
nodes = [{ id = 0, cpus = 2, memory = "1G" }]
[[kernel]]
name = "old"
profile = "linux-3.0"
[workload]
type = "anon-churn"
"#;

    #[test]
    fn a_minimal_scenario_resolves_with_defaults_and_a_stable_hash() {
        let s = Scenario::parse(MINIMAL).unwrap();
        let r = s.resolve();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].machine.distance, vec![vec![10]]);
        let text = r[0].to_toml();
        let back = RunConfig::parse(&text).unwrap();
        assert_eq!(back, r[0]);
        assert_eq!(back.hash(), r[0].hash());
    }

    #[test]
    fn unknown_keys_and_names_list_the_valid_ones() {
        let bad = MINIMAL.replace("profile = \"linux-3.0\"", "profile = \"linux-2.4\"");
        let e = Scenario::parse(&bad).unwrap_err();
        assert_eq!(e.key, "kernel[0].profile");
        assert!(e.message.contains("linux-3.0") && e.message.contains("linux-6.x"), "{}", e.message);
        let bad = MINIMAL.replace("[[kernel]]", "[[kernel]]\nsysctl = { min_free_kbyte = 5 }");
        let e = Scenario::parse(&bad).unwrap_err();
        assert!(e.message.contains("min_free_kbytes"), "{e}");
        let bad = MINIMAL.replace("[[kernel]]", "[[kernel]]\npolicy = { fallback = \"greedy\" }");
        let e = Scenario::parse(&bad).unwrap_err();
        assert!(e.message.contains("steal-largest-half-block"), "{e}");
        let bad = MINIMAL.replace("cpus = 2", "cpus = \"two\"");
        let e = Scenario::parse(&bad).unwrap_err();
        assert!(e.key.starts_with("machine.nodes"), "{e}");
    }

    #[test]
    fn config_hz_is_the_architectures_unless_the_kernel_sets_it() {
        let hz = |text: &str| Scenario::parse(text).map(|s| s.resolve()[0].kernel.hz);
        assert_eq!(hz(MINIMAL).unwrap(), 250);
        assert_eq!(hz(&MINIMAL.replace("[machine]", "[machine]\narch = \"s390x\"")).unwrap(), 100);
        assert_eq!(hz(&MINIMAL.replace("[[kernel]]", "[[kernel]]\nhz = 1000")).unwrap(), 1000);
        let e = hz(&MINIMAL.replace("[[kernel]]", "[[kernel]]\nhz = 200")).unwrap_err();
        assert_eq!(e.key, "kernel[0].hz");
        assert!(e.message.contains("valid: 100, 250, 300, 1000"), "{e}");
        let r = Scenario::parse(&MINIMAL.replace("[[kernel]]", "[[kernel]]\nhz = 300")).unwrap().resolve();
        assert_eq!(RunConfig::parse(&r[0].to_toml()).unwrap(), r[0]);
    }

    #[test]
    fn the_systems_page_cache_is_written_only_when_set_and_must_leave_its_node_room() {
        assert!(!Scenario::parse(MINIMAL).unwrap().resolve()[0].to_toml().contains("page_cache ="));
        let set = MINIMAL.replace("[[kernel]]", "[machine.system]\npage_cache = \"64M\"\n[[kernel]]");
        let r = Scenario::parse(&set).unwrap().resolve();
        assert_eq!(r[0].machine.system.page_cache.0, 64 << 20);
        assert_eq!(RunConfig::parse(&r[0].to_toml()).unwrap(), r[0]);
        let e = Scenario::parse(&set.replace("\"64M\"", "\"600M\"")).unwrap_err();
        assert_eq!(e.key, "machine.system.page_cache");
        assert!(e.message.contains("more than half of node 0's"), "{e}");
    }

    /// MINIMAL with its `[workload]` table replaced by `entries` (the text after `type = `).
    fn with_workloads(entries: &[&str]) -> String {
        let head = MINIMAL.split("[workload]").next().unwrap();
        let mut text = head.to_string();
        for e in entries {
            text += &format!("[[workload]]\ntype = {e}\n");
        }
        text
    }

    #[test]
    fn a_workload_array_resolves_one_config_per_workload_and_kernel() {
        let text = with_workloads(&["\"anon-churn\"\nduration = \"1s\"", "\"anon-churn\"\nduration = \"2s\""])
            .replacen("[[workload]]", "[[kernel]]\nname = \"new\"\nprofile = \"linux-6.x\"\n[[workload]]", 1);
        let s = Scenario::parse(&text).unwrap();
        assert_eq!(s.workloads().len(), 2);
        let by = s.resolve_by_workload();
        assert_eq!(by.len(), 2);
        let names: Vec<_> = by.iter().map(|ks| ks.iter().map(|c| (c.results_name.as_str(), c.kernel.name.as_str())).collect::<Vec<_>>()).collect();
        assert_eq!(names, vec![vec![("anonchurn", "old"), ("anonchurn", "new")], vec![("anonchurn-2", "old"), ("anonchurn-2", "new")]]);
        assert_eq!(s.resolve(), by.concat());
        assert_ne!(by[0][0].workload, by[1][0].workload);
        assert_ne!(by[0][0].hash(), by[1][0].hash());
        for c in s.resolve() {
            assert_eq!(RunConfig::parse(&c.to_toml()).unwrap(), c);
        }
    }

    #[test]
    fn a_table_and_a_one_entry_array_run_the_same_workload() {
        let one = Scenario::parse(MINIMAL).unwrap().resolve();
        let arr = Scenario::parse(&with_workloads(&["\"anon-churn\""])).unwrap().resolve();
        assert_eq!(one, arr);
        assert_eq!(one[0].results_name, "anonchurn");
    }

    #[test]
    fn repeated_benchmarks_are_numbered_in_scenario_order() {
        let s = Scenario::parse(&with_workloads(&["\"anon-churn\""; 3])).unwrap();
        assert_eq!(s.results_names(), vec!["anonchurn", "anonchurn-2", "anonchurn-3"]);
    }

    #[test]
    fn a_workload_runs_its_own_iterations_and_an_override_replaces_every_count() {
        let plain = Scenario::parse(&with_workloads(&["\"anon-churn\"", "\"anon-churn\""])).unwrap().resolve_by_workload();
        let mut s = Scenario::parse(&with_workloads(&["\"anon-churn\"", "\"anon-churn\"\niterations = 3"])).unwrap();
        let by = s.resolve_by_workload();
        // The first workload keeps the scenario's count and resolves as without the key.
        assert_eq!(by[0], plain[0]);
        assert_eq!(by[0][0].scenario.iterations, 1);
        assert_eq!(by[1][0].scenario.iterations, 3);
        assert_eq!(by[1][0].workload, plain[1][0].workload);
        for c in by.concat() {
            assert_eq!(RunConfig::parse(&c.to_toml()).unwrap(), c);
        }
        s.set_iterations(2);
        assert!(s.resolve().iter().all(|c| c.scenario.iterations == 2));
        // A single [workload] table takes the key too.
        let one = Scenario::parse(&MINIMAL.replace("type = \"anon-churn\"", "type = \"anon-churn\"\niterations = 4")).unwrap();
        assert_eq!(one.resolve()[0].scenario.iterations, 4);
        let e = Scenario::parse(&with_workloads(&["\"anon-churn\"", "\"anon-churn\"\niterations = 0"])).unwrap_err();
        assert_eq!(e.key, "workload[1]");
        assert!(e.message.contains("at least 1"), "{e}");
    }

    #[test]
    fn an_empty_workload_array_is_an_error_naming_the_key() {
        let text = format!("workload = []\n{}", MINIMAL.split("[workload]").next().unwrap());
        let e = Scenario::parse(&text).unwrap_err();
        assert_eq!(e.key, "workload");
        assert!(e.message.contains("at least one workload"), "{e}");
    }

    #[test]
    fn errors_inside_the_workload_array_name_the_entry() {
        let e = Scenario::parse(&with_workloads(&["\"anon-churn\"", "\"kernbench\""])).unwrap_err();
        assert_eq!(e.key, "workload[1].type");
        assert!(e.message.contains("unknown variant `kernbench`, expected one of `anon-churn`"), "{e}");
        let e = Scenario::parse(&with_workloads(&["\"anon-churn\"", "\"anon-churn\"\nduraton = \"1s\""])).unwrap_err();
        assert_eq!(e.key, "workload[1]");
        assert!(e.message.contains("unknown field `duraton`") && e.message.contains("`duration`"), "{e}");
        let e = Scenario::parse(&with_workloads(&["\"anon-churn\"", "\"anon-churn\"\nduration = \"0s\""])).unwrap_err();
        assert_eq!(e.key, "workload[1].duration", "{e}");
        let e = Scenario::parse(&format!("workload = 3\n{}", MINIMAL.split("[workload]").next().unwrap())).unwrap_err();
        assert_eq!(e.key, "workload");
        assert!(e.message.contains("[[workload]]"), "{e}");
    }

    #[test]
    fn errors_inside_a_workload_table_read_as_before() {
        let e = Scenario::parse(&MINIMAL.replace("\"anon-churn\"", "\"kernbench\"")).unwrap_err();
        assert_eq!(e.key, "workload.type");
        assert!(e.message.contains("unknown variant `kernbench`, expected one of `anon-churn`"), "{e}");
        let e = Scenario::parse(&MINIMAL.replace("type = \"anon-churn\"", "type = \"anon-churn\"\nduration = \"0s\"")).unwrap_err();
        assert_eq!(e.key, "workload.duration", "{e}");
    }
}
