#!/usr/bin/env python3
"""boto3 as the independent S3 client of the storage tests (reads AWS_* from the environment).

  s3tool.py mb BUCKET...                         make buckets
  s3tool.py put BUCKET KEY FILE                  upload a file (one PUT)
  s3tool.py put-bytes BUCKET KEY TEXT            upload UTF-8 text
  s3tool.py fill BUCKET PREFIX N GIF             N keys: every 50th a copy of GIF (k%05d.gif), the rest k%05d.txt
  s3tool.py get BUCKET KEY FILE                  download
  s3tool.py head BUCKET KEY                      JSON: size, type, cache-control, metadata, checksum, etag
  s3tool.py list BUCKET [PREFIX]                 JSON: [[key, size, etag], ...] in key order (every page)
  s3tool.py uploads BUCKET                       JSON: multipart uploads still in progress
  s3tool.py iam-user                             JSON: an IAM user with full S3 access and its keys
"""
import concurrent.futures, json, sys
import boto3

s3 = boto3.client("s3")


def main(args):
    op = args[0]
    if op == "mb":
        for b in args[1:]:
            s3.create_bucket(Bucket=b)
    elif op == "put":
        with open(args[3], "rb") as f:
            s3.put_object(Bucket=args[1], Key=args[2], Body=f.read())
    elif op == "put-bytes":
        s3.put_object(Bucket=args[1], Key=args[2], Body=args[3].encode())
    elif op == "fill":
        bucket, prefix, n, gif = args[1], args[2], int(args[3]), open(args[4], "rb").read()

        def one(i):
            if i % 50 == 0:
                s3.put_object(Bucket=bucket, Key=f"{prefix}k{i:05d}.gif", Body=gif)
            else:
                s3.put_object(Bucket=bucket, Key=f"{prefix}k{i:05d}.txt", Body=b"x")
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            list(pool.map(one, range(n)))
    elif op == "get":
        body = s3.get_object(Bucket=args[1], Key=args[2])["Body"].read()
        with open(args[3], "wb") as f:
            f.write(body)
    elif op == "head":
        h = s3.head_object(Bucket=args[1], Key=args[2], ChecksumMode="ENABLED")
        print(json.dumps({"size": h["ContentLength"], "type": h.get("ContentType"), "cacheControl": h.get("CacheControl"),
                          "metadata": h.get("Metadata", {}), "checksum": h.get("ChecksumSHA256"), "etag": h["ETag"]}))
    elif op == "list":
        out, kwargs = [], {"Bucket": args[1], "Prefix": args[2] if len(args) > 2 else ""}
        for page in s3.get_paginator("list_objects_v2").paginate(**kwargs):
            out += [[o["Key"], o["Size"], o["ETag"]] for o in page.get("Contents", [])]
        print(json.dumps(out))
    elif op == "uploads":
        r = s3.list_multipart_uploads(Bucket=args[1])
        print(json.dumps([u["Key"] for u in r.get("Uploads", [])]))
    elif op == "iam-user":
        iam = boto3.client("iam")
        iam.create_user(UserName="flipbook")
        iam.put_user_policy(UserName="flipbook", PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName="flipbook")["AccessKey"]
        print(json.dumps({"id": key["AccessKeyId"], "secret": key["SecretAccessKey"]}))
    else:
        sys.exit(f"unknown operation {op}")


if __name__ == "__main__":
    main(sys.argv[1:])
