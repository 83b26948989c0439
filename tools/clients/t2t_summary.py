# Summarize a torch2trt junit run: pass count and failure reasons grouped by their last error line.
import sys, re, collections, xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1]).getroot()
c = collections.Counter(); ex = {}
n = p = 0
for tc in t.iter("testcase"):
    n += 1
    f = tc.find("failure") or tc.find("error")
    f = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
    if f is None:
        if tc.find("skipped") is None: p += 1
        continue
    msg = (f.get("message") or "").splitlines()[0] if f.get("message") else ""
    msg = re.sub(r"0x[0-9a-f]+", "0x..", msg)[:160]
    c[msg] += 1; ex.setdefault(msg, tc.get("name"))
print("passed %d of %d" % (p, n))
for m, k in c.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 40):
    print("%4d  %s   [e.g. %s]" % (k, m, ex[m]))
