"""`gpu_instance` on AWS, Azure and Google Cloud, and the reclaim watcher (`watch`) and its
example."""
