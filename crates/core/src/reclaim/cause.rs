//! Why a VM is stopped, from each cloud's own record of it: a reclaim (bring it back),
//! a person (never start it), or something else (leave it, say what).

/// Why a stopped VM stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopCause {
    /// The cloud took the spot capacity back: the watcher starts it again.
    Reclaim,
    /// Someone stopped it (API, console, or from inside the VM): left alone.
    Person,
    /// Anything else (a scheduled retirement, an unknown code): left alone, reported
    /// with the cloud's own words.
    Other(String),
}

impl StopCause {
    /// Whether a watcher may start the VM again.
    pub fn restartable(&self) -> bool {
        *self == StopCause::Reclaim
    }
}

/// The cause of a stopped EC2 instance from its `StateReason.Code` (EC2 API reference,
/// `StateReason`): `Server.SpotInstanceShutdown` is a spot interruption with behaviour
/// stop; `Client.UserInitiatedShutdown` (the API) and `Client.InstanceInitiatedShutdown`
/// (`shutdown` inside the instance) are a person.
pub fn ec2_stop_cause(state_reason_code: Option<&str>) -> StopCause {
    match state_reason_code.map(str::trim) {
        Some("Server.SpotInstanceShutdown") => StopCause::Reclaim,
        Some("Client.UserInitiatedShutdown" | "Client.InstanceInitiatedShutdown") => {
            StopCause::Person
        }
        Some("Server.ScheduledStop") => StopCause::Other("scheduled retirement".into()),
        Some(c) if !c.is_empty() => StopCause::Other(c.to_string()),
        _ => StopCause::Other("no state reason".into()),
    }
}

/// The cause of a stopped (`TERMINATED`) Compute Engine VM from the `operationType` of
/// its latest zonal operation: `compute.instances.preempted` is a spot preemption (with
/// termination action `STOP` the VM stays, stopped); `stop` and `suspend` are a person.
pub fn gce_stop_cause(latest_operation_type: Option<&str>) -> StopCause {
    match latest_operation_type.map(str::trim) {
        Some("compute.instances.preempted") => StopCause::Reclaim,
        Some("stop" | "suspend") => StopCause::Person,
        Some(t) if !t.is_empty() => StopCause::Other(t.to_string()),
        _ => StopCause::Other("no operation".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ec2_state_reasons_tell_a_reclaim_from_a_person() {
        assert_eq!(
            ec2_stop_cause(Some("Server.SpotInstanceShutdown")),
            StopCause::Reclaim
        );
        assert!(ec2_stop_cause(Some("Server.SpotInstanceShutdown")).restartable());
        for person in [
            "Client.UserInitiatedShutdown",
            "Client.InstanceInitiatedShutdown",
        ] {
            assert_eq!(ec2_stop_cause(Some(person)), StopCause::Person);
            assert!(!ec2_stop_cause(Some(person)).restartable());
        }
        assert_eq!(
            ec2_stop_cause(Some("Server.ScheduledStop")),
            StopCause::Other("scheduled retirement".into())
        );
        // A terminated spot instance is not a stopped one: never restartable.
        assert!(!ec2_stop_cause(Some("Server.SpotInstanceTermination")).restartable());
        assert!(!ec2_stop_cause(None).restartable());
    }

    #[test]
    fn gce_operations_tell_a_preemption_from_a_person() {
        assert_eq!(
            gce_stop_cause(Some("compute.instances.preempted")),
            StopCause::Reclaim
        );
        assert_eq!(gce_stop_cause(Some("stop")), StopCause::Person);
        assert_eq!(gce_stop_cause(Some("suspend")), StopCause::Person);
        assert!(!gce_stop_cause(Some("compute.instances.hostError")).restartable());
        assert!(!gce_stop_cause(None).restartable());
    }
}
