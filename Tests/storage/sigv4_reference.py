"""botocore's Signature Version 4 over a table of requests: the independent signer FlipbookStorageTests
(SigV4ReferenceTests) compares ours with, byte for byte.

    sigv4_reference.py     prints {"timestamp": ..., "cases": [...]} as JSON on standard output

Each case gives its inputs (credentials, region, service, endpoint, bucket and key or path, query parameters
raw, headers, body) and what botocore computed from them at the fixed timestamp below:
- "header" cases: botocore.auth.S3SigV4Auth (payload signing off: UNSIGNED-PAYLOAD; on: the body's SHA-256);
- "generic" cases: botocore.auth.SigV4Auth (other services: the path normalised and encoded again);
- "presign" cases: botocore.auth.S3SigV4QueryAuth (a presigned URL);
- "client" cases: a real boto3 S3 client's generate_presigned_url (its own serializer, addressing and
  presigner), compared as whole URLs.
Object key paths are encoded by botocore's own serializer function (botocore.utils.percent_encode with '/'
and '~' safe), query parameters by the signers themselves from the raw values, so the Swift side's encoding
is checked as well. The clock is fixed by replacing botocore.auth's get_current_datetime.

Exit 0 with the JSON; anything else is an error.
"""
import datetime
import hashlib
import json
import sys
from urllib.parse import urlsplit

import boto3
import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.utils import percent_encode

TIMESTAMP = datetime.datetime(2026, 11, 28, 12, 34, 56)
botocore.auth.get_current_datetime = lambda remove_tzinfo=True: TIMESTAMP

KEYS = {
    "plain": ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None),
    "session": (
        "ASIAIOSFODNN7EXAMPLE",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+example/token+with/slashes=",
    ),
    "suite": ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None),
}

AWS_EAST = "https://s3.us-east-1.amazonaws.com"
TOKEN = "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="


def s3(name, key="", bucket="media", method="GET", endpoint=AWS_EAST, addressing="virtual", params=(), headers=(),
       body=None, signed_payload=False, creds="plain", region="us-east-1", mode="header", expires=3600):
    return dict(name=name, mode=mode, bucket=bucket, key=key, method=method, endpoint=endpoint, addressing=addressing,
                params=[list(p) for p in params], headers=[list(h) for h in headers], body=body,
                signed_payload=signed_payload, creds=creds, region=region, service="s3", expires=expires)


def generic(name, path, service, method="GET", endpoint="https://example.amazonaws.com", params=(), headers=(), body=None,
            creds="suite", region="us-east-1"):
    return dict(name=name, mode="generic", path=path, method=method, endpoint=endpoint, params=[list(p) for p in params],
                headers=[list(h) for h in headers], body=body, signed_payload=True, creds=creds, region=region,
                service=service)


CASES = [
    # Object keys (GET, virtual-hosted on AWS, UNSIGNED-PAYLOAD unless said otherwise).
    s3("plain key", "photos/cat.jpg"),
    s3("spaces", "my photos/summer holiday.jpg"),
    s3("plus", "a+b+c.gif"),
    s3("equals", "x=1/y=2.png"),
    s3("tilde", "~user/file~1.txt"),
    s3("unicode e-acute", "café/résumé.jpg"),
    s3("unicode japanese", "日本/東京 タワー.mp4"),
    s3("double slash inside", "a//b///c.gif"),
    s3("trailing slash", "folder/sub/"),
    s3("key is a slash", "/"),
    s3("literal percent", "100%/50%25.txt"),
    s3("reserved characters", "a:b@c!d$e&f'g(h)i*j,k;l?m#n[o].txt"),
    s3("dot segments kept", "a/./b/../c"),
    s3("empty key: the bucket", ""),
    # Queries.
    s3("ListObjectsV2 continuation", "", endpoint="http://127.0.0.1:9000", addressing="path",
       params=[("list-type", "2"), ("prefix", "a b"), ("delimiter", "/"), ("continuation-token", TOKEN)]),
    s3("ListObjectsV2 unicode prefix", "", params=[("list-type", "2"), ("prefix", "日本/é+"), ("max-keys", "1000"),
                                                   ("start-after", "a/b~c")]),
    s3("sub-resource without value", "", params=[("acl", "")]),
    s3("empty values", "k", params=[("versionId", ""), ("x", ""), ("a", "1")]),
    s3("repeated names", "k", params=[("tag", "b"), ("tag", "a"), ("tag", ""), ("Tag", "z")]),
    s3("names needing encoding", "k", params=[("a b", "1"), ("ä", "2"), ("x/y", "3"), ("*", "4"), ("p%q", "5")]),
    s3("prefix sorts before longer name", "k", params=[("Param-3", "v3"), ("Param", "v2"), ("ሴ", "v1")]),
    # Headers.
    s3("range, signed empty payload", "video/talk.mp4", headers=[("Range", "bytes=0-1023")], signed_payload=True),
    s3("range and if-match", "video/talk.mp4", headers=[("Range", "bytes=1048576-2097151"),
                                                       ("If-Match", '"9b2cf535f27731c974343645a3985328"')]),
    s3("session token", "photos/cat.jpg", creds="session"),
    s3("sequential spaces in values", "k", headers=[("x-amz-meta-note", "  a   b \t c  "),
                                                    ("X-Amz-Meta-Quoted", '"x   y"')]),
    s3("mixed-case header names", "k", method="PUT", headers=[("Content-Type", "image/gif"), ("X-Amz-Meta-Author", "Ann"),
                                                             ("CACHE-CONTROL", "max-age=60")], body="GIF89a", signed_payload=True),
    s3("repeated header names", "k", headers=[("x-amz-meta-a", "2"), ("x-amz-meta-a", "1")]),
    s3("user-agent and expect not signed", "k", method="PUT", headers=[("User-Agent", "flipbook/1"), ("Expect", "100-continue")],
       body="x", signed_payload=True),
    # Writes.
    s3("PUT with payload hash", "test$file.text", method="PUT",
       headers=[("x-amz-storage-class", "REDUCED_REDUNDANCY"), ("Content-Type", "text/plain")],
       body="Welcome to Amazon S3.", signed_payload=True),
    s3("PUT empty body signed", "empty", method="PUT", body="", signed_payload=True),
    s3("CreateMultipartUpload", "big/out.mp4", method="POST", params=[("uploads", "")],
       headers=[("Content-Type", "video/mp4")], signed_payload=True),
    s3("UploadPart", "big/out.mp4", method="PUT", params=[("partNumber", "1"), ("uploadId", "abc/def+ghi=")]),
    s3("CompleteMultipartUpload", "big/out.mp4", method="POST", params=[("uploadId", "abc/def+ghi=")],
       headers=[("Content-Type", "application/xml")], signed_payload=True,
       body="<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"e\"</ETag></Part></CompleteMultipartUpload>"),
    s3("DELETE abort", "big/out.mp4", method="DELETE", params=[("uploadId", "u1")]),
    # Hosts and addressing.
    s3("path-style with a port", "a b/c.gif", endpoint="http://localhost:4566", addressing="path", bucket="my.bucket.dots"),
    s3("virtual-hosted custom endpoint", "k/é", endpoint="https://storage.example.net", region="auto"),
    s3("IPv6 endpoint path-style", "k", endpoint="http://[::1]:9000", addressing="path"),
    s3("default port dropped", "k", endpoint="https://s3.example.com:443", addressing="path", region="eu-west-1"),
    s3("HEAD in eu-central-1", "x y", method="HEAD", endpoint="https://s3.eu-central-1.amazonaws.com", region="eu-central-1"),
    # Presigned GETs and PUTs.
    s3("presign spaces and unicode", "my photos/日本 é.jpg", mode="presign"),
    s3("presign session token, 7 days", "photos/cat.jpg", mode="presign", creds="session", expires=604800),
    s3("presign with its own query", "k", mode="presign", params=[
        ("response-content-disposition", 'attachment; filename="a b.jpg"'), ("versionId", "3/L4kqtJl40Nr8X8gdRQBpUMLUo")]),
    s3("presign PUT path-style port", "up/x+y.gif", method="PUT", mode="presign", endpoint="http://127.0.0.1:9000",
       addressing="path", expires=60),
    s3("presign key is a slash", "/", mode="presign"),
    s3("presign with a Range header", "v.mp4", mode="presign", headers=[("Range", "bytes=0-99")]),
    # Other services: generic SigV4.
    generic("STS form POST", "/", "sts", method="POST", endpoint="https://sts.us-east-1.amazonaws.com",
            headers=[("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")],
            body="Action=GetCallerIdentity&Version=2011-06-15"),
    generic("normalised path", "/a/./b/../c//d/", "execute-api", params=[("q", "x y"), ("e", "")]),
    generic("encoded path encoded again", "/example%20space/%E1%88%B4", "service"),
    generic("relative path to root", "/example1/example2/../..", "service"),
    generic("session token generic", "/", "service", creds="session", headers=[("My-Header1", "value4"), ("my-header1", "value1")]),
]

CLIENT_CASES = [
    dict(name="client path-style loopback", endpoint="http://127.0.0.1:9000", addressing="path", bucket="media",
         key="a b/日本.gif", creds="plain", region="us-east-1", expires=900),
    dict(name="client virtual-hosted AWS with session", endpoint=None, addressing="virtual", bucket="derived",
         key="x+y=z~.txt", creds="session", region="eu-central-1", expires=3600),
    dict(name="client trailing slash and double slash", endpoint="https://storage.example.net", addressing="path",
         bucket="gifs", key="lib//a/", creds="plain", region="auto", expires=120),
]


def credentials(name):
    access, secret, token = KEYS[name]
    return Credentials(access, secret, token)


def record(signer, *methods):
    """What each of the signer's `methods` returns during add_auth, kept by name (the last call wins)."""
    seen = {}

    def wrap(name, method):
        def recorded(*args):
            seen[name] = method(*args)
            return seen[name]
        setattr(signer, name, recorded)

    for name in methods:
        wrap(name, getattr(signer, name))
    return seen


def case_url(case):
    """The request URL as botocore's S3 serializer would build it."""
    parts = urlsplit(case["endpoint"])
    key = percent_encode(case["key"], safe="/~")
    if case["addressing"] == "path":
        path = "/" + percent_encode(case["bucket"]) + ("/" + key if case["key"] else "")
        return f"{parts.scheme}://{parts.netloc}{path}"
    return f"{parts.scheme}://{case['bucket']}.{parts.netloc}/{key}"


def run(case):
    creds = credentials(case["creds"])
    url = case_url(case) if case["mode"] != "generic" else case["endpoint"] + case["path"]
    body = case["body"].encode() if case["body"] is not None else b""
    request = AWSRequest(method=case["method"], url=url, data=body)
    for name, value in case["headers"]:
        request.headers[name] = value  # HTTPHeaders appends: repeated names stay repeated
    if case["params"]:
        request.params = [tuple(p) for p in case["params"]]
    if case["mode"] == "header":
        request.context["client_config"] = Config(s3={"payload_signing_enabled": case["signed_payload"]})
        signer = botocore.auth.S3SigV4Auth(creds, "s3", case["region"])
    elif case["mode"] == "generic":
        signer = botocore.auth.SigV4Auth(creds, case["service"], case["region"])
    else:
        if case["params"]:
            request.params = dict(request.params)  # the presigner takes a mapping (no repeated names)
        signer = botocore.auth.S3SigV4QueryAuth(creds, "s3", case["region"], expires=case["expires"])
    seen = record(signer, "canonical_request", "string_to_sign", "signature")
    signer.add_auth(request)
    canonical, string_to_sign, signature = seen["canonical_request"], seen["string_to_sign"], seen["signature"]
    out = dict(case, url=url, payload_hash=hashlib.sha256(body).hexdigest(), canonical_request=canonical,
               string_to_sign=string_to_sign, signature=signature)
    if case["mode"] == "presign":
        out["signed_url"] = request.url
        assert request.url.endswith("X-Amz-Signature=" + signature), request.url
    else:
        out["authorization"] = request.headers["Authorization"]
        assert out["authorization"].endswith("Signature=" + signature)
        out["signed_headers_sent"] = [[k, v] for k, v in request.headers.items()]
    return out


def run_client(case):
    access, secret, token = KEYS[case["creds"]]
    client = boto3.client(
        "s3", region_name=case["region"], endpoint_url=case["endpoint"], aws_access_key_id=access,
        aws_secret_access_key=secret, aws_session_token=token,
        config=Config(signature_version="s3v4", s3={"addressing_style": case["addressing"]}))
    url = client.generate_presigned_url("get_object", Params={"Bucket": case["bucket"], "Key": case["key"]},
                                        ExpiresIn=case["expires"])
    return dict(case, mode="client", signed_url=url)


def main():
    names = [c["name"] for c in CASES + CLIENT_CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    cases = [run(c) for c in CASES] + [run_client(c) for c in CLIENT_CASES]
    json.dump({"timestamp": TIMESTAMP.strftime("%Y-%m-%dT%H:%M:%SZ"), "credentials": KEYS, "cases": cases}, sys.stdout,
              ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
