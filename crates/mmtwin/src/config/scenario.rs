//! The scenario file and its resolution into one `RunConfig` per kernel.

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

/// A scenario file as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub scenario: ScenarioMeta,
    pub machine: MachineSpec,
    #[serde(rename = "kernel")]
    pub kernels: Vec<KernelSpec>,
    pub workload: WorkloadSpec,
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
}

/// Everything one kernel's run depends on. A run is a pure function of this and the iteration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
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
        let layout = self.machine.layout()?;
        self.workload.validate(&layout)?;
        Ok(())
    }

    /// One resolved configuration per kernel, in scenario order.
    pub fn resolve(&self) -> Vec<RunConfig> {
        let mut machine = self.machine.clone();
        machine.resolve();
        let layout = machine.layout().expect("validated");
        let workload = self.workload.resolved(&layout);
        self.kernels
            .iter()
            .map(|k| RunConfig {
                scenario: self.scenario.clone(),
                machine: machine.clone(),
                kernel: ResolvedKernel {
                    name: k.name.clone(),
                    profile: k.profile,
                    era: k.profile.era(),
                    sysctl: k.sysctl.apply(&k.profile.sysctl()),
                    policy: k.policy.apply(k.profile.alloc_policy()),
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
}
