import socket, sys, struct
port, out = int(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("127.0.0.1", port))
s.settimeout(3.0)
packets = []
try:
    while True:
        d = s.recv(65536)
        packets.append(d)
        s.settimeout(1.0)
except socket.timeout:
    pass
with open(out, "wb") as f:
    for p in packets:
        f.write(struct.pack(">H", len(p)) + p)
print(len(packets), "packets")
