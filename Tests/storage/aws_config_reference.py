"""What botocore (the aws CLI's configuration code) resolves from an environment and the shared files: the
independent reference for FlipbookStorageTests' AWSConfigurationTests.

    aws_config_reference.py ENV_JSON     ENV_JSON is the complete environment to resolve in (HOME, AWS_*)

Prints {"region", "endpoint_url", "addressing_style", "max_attempts", "access_key", "secret_key", "token",
"method"} as JSON: the region, the S3 client's endpoint, its addressing style, the configured attempt count and
the credentials the default chain finds (null when none). Nothing is sent anywhere: instance metadata is
switched off.
"""
import json
import os
import sys

import botocore.session

os.environ.clear()
os.environ.update(json.loads(sys.argv[1]))
# The chain's last links (container and EC2 instance metadata) would reach for the network: this machine has
# neither, and Flipbook does not consult them.
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
session = botocore.session.Session()
credentials = session.get_credentials()
client = session.create_client("s3", region_name=session.get_config_variable("region") or "us-east-1")
print(json.dumps({
    "region": session.get_config_variable("region"),
    "endpoint_url": client.meta.endpoint_url,
    "addressing_style": (client.meta.config.s3 or {}).get("addressing_style"),
    "max_attempts": session.get_config_variable("max_attempts"),
    "access_key": credentials.access_key if credentials else None,
    "secret_key": credentials.secret_key if credentials else None,
    "token": credentials.token if credentials else None,
    "method": credentials.method if credentials else None,
}))
