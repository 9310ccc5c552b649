//! The AWS driver: what the provider knows about AWS. [`rules`] (always built): EKS
//! managed node groups as data; [`instance_rules`] (always built): EC2 instances as data,
//! and their ids. With the `aws` feature, the clients over the AWS SDK with
//! the usual AWS credential chain (loaded once per region and profile by one [`AwsSession`]):
//! [`Eks`] (node groups, the [`crate::seam::NodeGroups`] seam), [`Ec2Instances`] (VMs,
//! [`crate::seam::Instances`]) and [`Ec2Commitments`] (capacity blocks and reservations,
//! [`crate::seam::Commitments`]).

pub mod codes;
pub mod endpoints;
pub mod instance_rules;
pub mod rules;
#[cfg(feature = "live")]
pub mod sdk;

#[cfg(feature = "aws")]
mod clients;
#[cfg(feature = "aws")]
mod commitments;
#[cfg(feature = "aws")]
mod config_cache;
#[cfg(feature = "aws")]
mod convert;
#[cfg(feature = "aws")]
mod eks;
#[cfg(feature = "aws")]
mod errors;
#[cfg(feature = "aws")]
mod instances;
#[cfg(feature = "aws")]
mod placement_scores;
#[cfg(feature = "aws")]
mod retrying;
#[cfg(feature = "aws")]
mod session;
#[cfg(feature = "aws")]
mod settings;

#[cfg(feature = "aws")]
pub use aws_config::SdkConfig;
#[cfg(feature = "aws")]
pub use commitments::Ec2Commitments;
#[cfg(feature = "aws")]
pub use config_cache::{ConfigCache, ConfigKey};
#[cfg(feature = "aws")]
pub use eks::{Eks, launch_template_name};
#[cfg(feature = "aws")]
pub use instances::{DLAMI_NAME, DLAMI_OWNER, Ec2Instances};
#[cfg(feature = "aws")]
pub use placement_scores::{Ec2PlacementScores, score_of as placement_score_of};
#[cfg(feature = "aws")]
pub use session::AwsSession;
#[cfg(feature = "aws")]
pub use settings::AwsSettings;
