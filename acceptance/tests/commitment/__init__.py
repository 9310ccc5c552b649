"""`gpu_commitment` on AWS, Azure and Google Cloud, and the commitment-floor example."""
