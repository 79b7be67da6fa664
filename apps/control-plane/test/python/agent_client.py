"""An independent agent: Debian's python3-grpcio against the control plane's gRPC service.

Driven by python-client.test.ts. Run with /usr/bin/python3 and one JSON argument:
  {"target": "localhost:PORT", "ca_file": "...", "gen_dir": "...", "token": "...",
   "subscription_id": "...", "timeout": 10}
gen_dir holds the code generated from proto/svc/controlplane/v1/controlplane.proto by
grpc_tools.protoc. Prints one JSON line on stdout with what was observed; on an unexpected
failure it prints {"error": ...} and exits 1.
"""

import json
import queue
import sys
import threading
import traceback

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

args = json.loads(sys.argv[1])
sys.path.insert(0, args["gen_dir"])
from svc.controlplane.v1 import controlplane_pb2 as pb  # noqa: E402
from svc.controlplane.v1 import controlplane_pb2_grpc as pbg  # noqa: E402

TARGET = args["target"]
TIMEOUT = float(args.get("timeout", 10))
with open(args["ca_file"], "rb") as f:
    CA_PEM = f.read()

_END = object()


class Failure(Exception):
    pass


def code_of(fn):
    """Runs fn; returns the gRPC status name it failed with, or 'OK'."""
    try:
        fn()
        return "OK"
    except grpc.RpcError as e:
        return e.code().name


def enroll(channel, token, csr_pem):
    return pbg.ControlPlaneStub(channel).Enroll(
        pb.EnrollRequest(token=token, csr_pem=csr_pem, hostname="py-enroll", agent_version="py-0.9"),
        timeout=TIMEOUT,
    )


class SyncStream:
    """A Sync call fed from a queue (so messages go out in reaction to responses), read by a thread."""

    def __init__(self, channel):
        self.out = queue.Queue()
        self.inbox = queue.Queue()
        self.end_code = None
        self.end_details = None
        self.call = pbg.ControlPlaneStub(channel).Sync(self._requests(), timeout=4 * TIMEOUT)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _requests(self):
        while True:
            m = self.out.get()
            if m is _END:
                return
            yield m

    def _read(self):
        try:
            for m in self.call:
                self.inbox.put(m)
            self.end_code = "OK"
        except grpc.RpcError as e:
            self.end_code = e.code().name
            self.end_details = e.details()
        self.inbox.put(_END)

    def send(self, **kw):
        self.out.put(pb.AgentMessage(**kw))

    def close(self):
        """Half-closes (the generator stops yielding) and waits for the server to end the call."""
        self.out.put(_END)
        self.reader.join(TIMEOUT)
        if self.reader.is_alive():
            self.call.cancel()
            raise Failure("the stream did not end after the agent half-closed it")
        return self.end_code

    def expect(self, kind, skipped):
        """The next server message of the given oneof kind; others are recorded in `skipped`."""
        while True:
            try:
                m = self.inbox.get(timeout=TIMEOUT)
            except queue.Empty:
                self.call.cancel()
                raise Failure(f"no {kind} within {TIMEOUT} s")
            if m is _END:
                raise Failure(f"stream ended ({self.end_code}: {self.end_details}) while waiting for {kind}")
            if m.WhichOneof("msg") == kind:
                return getattr(m, kind)
            skipped.append(m.WhichOneof("msg"))


def main():
    out = {}
    key = ec.generate_private_key(ec.SECP256R1())
    csr = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "py-agent")]))
        .sign(key, hashes.SHA256())
    )
    csr_pem = csr.public_bytes(serialization.Encoding.PEM).decode()
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    # TLS pinned to our CA, no client certificate: Enroll.
    tls = grpc.ssl_channel_credentials(root_certificates=CA_PEM)
    with grpc.secure_channel(TARGET, tls) as ch:
        out["enroll_bad_token"] = code_of(lambda: enroll(ch, "not-a-real-token", csr_pem))
        resp = enroll(ch, args["token"], csr_pem)
    cert = x509.load_pem_x509_certificate(resp.client_cert_pem.encode())
    ca = x509.load_pem_x509_certificate(CA_PEM)
    out["node_id"] = resp.node_id
    out["cert_cn"] = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    out["cert_issuer_is_ca"] = cert.issuer == ca.subject
    out["cert_key_matches"] = cert.public_key().public_numbers() == key.public_key().public_numbers()
    out["ca_cert_matches"] = resp.ca_cert_pem.strip() == CA_PEM.decode().strip()

    hello = pb.Hello(hostname="py-agent", os="linux", arch="x64", agent_version="py-1.0", xray_version="", applied_revision=0)

    # Sync without a client certificate.
    with grpc.secure_channel(TARGET, tls) as ch:

        def no_cert():
            for _ in pbg.ControlPlaneStub(ch).Sync(iter([pb.AgentMessage(hello=hello)]), timeout=TIMEOUT):
                pass

        out["sync_no_cert"] = code_of(no_cert)

    # Sync over mTLS with the issued certificate.
    mtls = grpc.ssl_channel_credentials(root_certificates=CA_PEM, private_key=key_pem, certificate_chain=resp.client_cert_pem.encode())
    skipped = []
    with grpc.secure_channel(TARGET, mtls) as ch:
        s = SyncStream(ch)
        s.send(hello=hello)
        desired = s.expect("desired_state", skipped)
        out["desired_revision"] = desired.revision
        out["desired_has_xray"] = desired.config.HasField("xray")
        s.send(apply_result=pb.ApplyResult(revision=desired.revision, success=True))
        s.send(
            status=pb.StatusReport(
                xray_running=True,
                cpu_percent=12.5,
                memory_used_bytes=1000,
                memory_total_bytes=4000,
                disk_used_bytes=5000,
                disk_total_bytes=9000,
                connections=3,
                xray_uptime_seconds=60,
            )
        )
        report = pb.UsageReport(
            report_id=1, entries=[pb.UsageEntry(subscription_id=args["subscription_id"], uplink_bytes=100, downlink_bytes=200)]
        )
        acks = []
        s.send(usage=report)
        acks.append(s.expect("usage_ack", skipped).report_id)
        s.send(usage=report)  # the same report again, as after a lost ack
        acks.append(s.expect("usage_ack", skipped).report_id)
        out["acks"] = acks
        out["sync_end"] = s.close()
    out["skipped"] = skipped
    return out


if __name__ == "__main__":
    try:
        result = main()
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}), flush=True)
        sys.exit(1)
    print(json.dumps(result), flush=True)
