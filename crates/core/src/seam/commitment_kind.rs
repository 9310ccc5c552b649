//! The kinds of commitment a user can buy, and what each one's cloud allows: zonal or
//! regional, cancellable or not, how its term is given, and whether this version builds it.

use std::fmt;
use std::str::FromStr;

use crate::offer::Cloud;

/// One kind of commitment, by its cloud's product.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CommitmentKind {
    /// EC2 Capacity Blocks for ML: GPU instances for a fixed window, paid up front.
    AwsCapacityBlock,
    /// EC2 On-Demand Capacity Reservation: capacity held in one zone at the on-demand rate.
    AwsCapacityReservation,
    /// Compute Engine committed use discount (1 or 3 years).
    GcpCommitment,
    /// Compute Engine zonal reservation.
    GcpReservation,
    /// Azure reserved VM instances (1 or 3 years).
    AzureReservation,
    /// Azure capacity reservation (a group holding VM capacity at the pay-as-you-go rate).
    AzureCapacityReservation,
}

/// How a kind's length is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermStyle {
    /// `duration_hours` and a start window (capacity blocks).
    Window,
    /// `term = "1y" | "3y"` and `billing` (committed use, reserved instances).
    Years,
    /// Open-ended until cancelled, optionally with an end date (capacity reservations).
    UntilCancelled,
}

impl CommitmentKind {
    /// Every kind, in the order of the docs.
    pub const ALL: [CommitmentKind; 6] = [
        CommitmentKind::AwsCapacityBlock,
        CommitmentKind::AwsCapacityReservation,
        CommitmentKind::GcpCommitment,
        CommitmentKind::GcpReservation,
        CommitmentKind::AzureReservation,
        CommitmentKind::AzureCapacityReservation,
    ];

    /// The name users write (`aws_capacity_block`).
    pub fn as_str(self) -> &'static str {
        match self {
            CommitmentKind::AwsCapacityBlock => "aws_capacity_block",
            CommitmentKind::AwsCapacityReservation => "aws_capacity_reservation",
            CommitmentKind::GcpCommitment => "gcp_commitment",
            CommitmentKind::GcpReservation => "gcp_reservation",
            CommitmentKind::AzureReservation => "azure_reservation",
            CommitmentKind::AzureCapacityReservation => "azure_capacity_reservation",
        }
    }

    /// The cloud selling it.
    pub fn cloud(self) -> Cloud {
        match self {
            CommitmentKind::AwsCapacityBlock | CommitmentKind::AwsCapacityReservation => Cloud::Aws,
            CommitmentKind::GcpCommitment | CommitmentKind::GcpReservation => Cloud::Gcp,
            CommitmentKind::AzureReservation | CommitmentKind::AzureCapacityReservation => {
                Cloud::Azure
            }
        }
    }

    /// Whether the commitment holds capacity in one zone (and so needs `zone`, or, for
    /// capacity blocks, gets the zone of the offering chosen). A Compute Engine GPU
    /// commitment is regional but must attach a reservation, which is zonal.
    pub fn zonal(self) -> bool {
        matches!(
            self,
            CommitmentKind::AwsCapacityBlock
                | CommitmentKind::AwsCapacityReservation
                | CommitmentKind::GcpReservation
                | CommitmentKind::GcpCommitment
                | CommitmentKind::AzureCapacityReservation
        )
    }

    /// Whether destroying it can cancel it (and stop the bill).
    pub fn cancellable(self) -> bool {
        matches!(
            self,
            CommitmentKind::AwsCapacityReservation
                | CommitmentKind::GcpReservation
                | CommitmentKind::AzureCapacityReservation
        )
    }

    /// How its length is given.
    pub fn term_style(self) -> TermStyle {
        match self {
            CommitmentKind::AwsCapacityBlock => TermStyle::Window,
            CommitmentKind::GcpCommitment | CommitmentKind::AzureReservation => TermStyle::Years,
            CommitmentKind::AwsCapacityReservation
            | CommitmentKind::GcpReservation
            | CommitmentKind::AzureCapacityReservation => TermStyle::UntilCancelled,
        }
    }

    /// Whether this version of the provider can buy it (the others fail at plan, saying so).
    pub fn built(self) -> bool {
        matches!(self.cloud(), Cloud::Aws | Cloud::Gcp | Cloud::Azure)
    }

    /// The names of every kind, for messages.
    pub fn names() -> String {
        Self::ALL
            .iter()
            .map(|k| format!("\"{}\"", k.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for CommitmentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `kind` that names none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown commitment kind \"{0}\": valid kinds are {names}", names = CommitmentKind::names())]
pub struct UnknownKind(pub String);

impl FromStr for CommitmentKind {
    type Err = UnknownKind;

    /// Case-insensitive, `-` and `_` alike: `AWS-Capacity-Block` is `aws_capacity_block`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == norm)
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_spellings_agree() {
        for k in CommitmentKind::ALL {
            assert_eq!(k.as_str().parse::<CommitmentKind>(), Ok(k));
            assert_eq!(k.as_str().to_uppercase().replace('_', "-").parse(), Ok(k));
        }
        let err = "aws_block".parse::<CommitmentKind>().unwrap_err();
        assert!(err.to_string().contains("\"aws_capacity_block\""), "{err}");
    }

    #[test]
    fn rules_per_kind() {
        use CommitmentKind::*;
        assert!(!AwsCapacityBlock.cancellable() && AwsCapacityReservation.cancellable());
        assert!(!AzureReservation.zonal() && GcpReservation.zonal() && GcpCommitment.zonal());
        assert_eq!(AzureReservation.term_style(), TermStyle::Years);
        assert_eq!(AwsCapacityBlock.term_style(), TermStyle::Window);
        assert_eq!(AzureCapacityReservation.cloud(), Cloud::Azure);
        assert!(CommitmentKind::ALL.iter().all(|k| k.built()));
    }
}
