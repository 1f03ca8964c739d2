"""Run inside a `PodView` of the gateway sidecar (Debian's python3, standard library only).

Its one argument is JSON: the container's command, the readiness probe's port and path,
the runtime's port, and the path of one request to send through. It starts a stand-in
model server on the runtime's port (the pod's other container), runs the container's
command with `-t` (nginx's configuration test), then the command itself, waits for the
readiness probe to answer 200, sends the request and prints one JSON object: what `-t`
said, whether the probe passed, the request's status and whether it reached the model.
"""

import http.client
import http.server
import json
import subprocess
import sys
import threading
import time

spec = json.loads(sys.argv[1])
reached = []


class Model(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        reached.append(self.path)
        body = json.dumps({"choices": [{"text": "hello"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


model = http.server.ThreadingHTTPServer(("127.0.0.1", spec["runtime_port"]), Model)
threading.Thread(target=model.serve_forever, daemon=True).start()


def request(method, path, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", spec["port"], timeout=5)
    try:
        headers = {"Content-Type": "application/json"} if body else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


result = {}
test = subprocess.run([*spec["command"], "-t"], capture_output=True, text=True, timeout=20)
result["test_rc"] = test.returncode
result["test_output"] = test.stderr
result["ready"] = False
if test.returncode == 0:
    server = subprocess.Popen(spec["command"], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if request("GET", spec["probe_path"]) == 200:
                    result["ready"] = True
                    break
            except OSError:
                time.sleep(0.05)
        if result["ready"]:
            body = json.dumps({"model": spec["model"], "prompt": "hello"})
            result["status"] = request("POST", spec["request_path"], body)
            result["reached_model"] = spec["request_path"] in reached
    finally:
        server.terminate()
        try:
            _, errors = server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            _, errors = server.communicate()
        result["server_output"] = errors[-2000:]
model.shutdown()
print(json.dumps(result))
