"""Independent reference numbers for the core/algorithms tests.

Plain Python (no numpy, no torch), written from the formulas in the
headers, one loop at a time. Run once: `python3 reference_values.py`; the
printed numbers are pasted into the *_test.cpp files next to the inputs
they belong to. Padding is simply left out of the lists below.
"""
import math


def mean(xs):
    return sum(xs) / len(xs)


def var(xs):  # unbiased, like torch.var
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def whiten(rows):  # rows: lists of valid values; whitening over all of them
    flat = [x for r in rows for x in r]
    m, v = mean(flat), var(flat)
    return [[(x - m) / math.sqrt(v + 1e-8) for x in r] for r in rows]


def gae(rewards, values, gamma, lam):  # valid positions only
    adv, next_v, next_a = [0.0] * len(rewards), 0.0, 0.0
    for k in reversed(range(len(rewards))):
        delta = rewards[k] + gamma * next_v - values[k]
        next_a = delta + gamma * lam * next_a
        next_v = values[k]
        adv[k] = next_a
    return adv


def returns(rewards, gamma):
    out, g = [0.0] * len(rewards), 0.0
    for k in reversed(range(len(rewards))):
        g = rewards[k] + gamma * g
        out[k] = g
    return out


def show(name, value):
    if isinstance(value, list):
        if value and isinstance(value[0], list):
            value = "{" + ", ".join("{" + ", ".join(f"{x:.9g}" for x in r) + "}" for r in value) + "}"
        else:
            value = "{" + ", ".join(f"{x:.9g}" for x in value) + "}"
    else:
        value = f"{value:.9g}"
    print(f"{name}: {value}")


print("== masked_ops")
show("whiten [1,2,3 | 4,5]", whiten([[1, 2, 3], [4, 5]]))

print("== gae gamma=0.9 lambda=0.8")
rows = [([0, 0, 1], [0.5, 0.6, 0.7]), ([0.5, 0, 2], [1, 0.2, 0.4])]  # row 1: positions 0, 2, 3
advs = [gae(r, v, 0.9, 0.8) for r, v in rows]
show("advantages", advs)
show("returns", [[a + v for a, v in zip(ad, r[1])] for ad, r in zip(advs, rows)])
show("whitened", whiten(advs))

print("== reinforce++ gamma=0.5")
g = [returns([1, 2, 3], 0.5), returns([1, 2], 0.5)]  # row 1: positions 0, 2
show("returns", g)
show("advantages", whiten(g))

print("== grpo; groups {0,1,4}, {2,3}, {5}; scores 1, 0, 0.5, 2, 2, 3")
scores = [1, 0, 0.5, 2, 2, 3]
groups = [[0, 1, 4], [2, 3], [5]]
eps = 1e-6
grpo, rloo, base = [0.0] * 6, [0.0] * 6, [0.0] * 6
for grp in groups:
    s = [scores[i] for i in grp]
    for i in grp:
        if len(grp) == 1:
            grpo[i] = scores[i] / (1 + eps)
            rloo[i] = base[i] = scores[i]
        else:
            grpo[i] = (scores[i] - mean(s)) / (math.sqrt(var(s)) + eps)
            rloo[i] = scores[i] - (sum(s) - scores[i]) / (len(s) - 1)
            base[i] = scores[i] - mean(s)
show("grpo", grpo)
show("rloo", rloo)
lengths = [3, 2, 2, 1, 3, 3]  # valid tokens per row
show("reinforce++ baseline (row values)",
     [r[0] for r in whiten([[base[i]] * lengths[i] for i in range(6)])])

print("== policy loss")
ratio = [1.5, 0.5, 1.1, 0.7, 4.0]
show("ppo_kl", mean([-math.log(r) for r in ratio]))

print("== value loss")
R, V = [0.8, 1.0, 1.0, 2.0], [1.0, 2.0, 1.5, 0.5]
show("explained_variance", 1 - var([r - v for r, v in zip(R, V)]) / (var(R) + 1e-5))

print("== entropy")
p = [0.25, 0.25, 0.5]
H = -sum(q * math.log(q) for q in p)
show("H", H)
show("dH/dlogits", [-q * (math.log(q) + H) for q in p])

print("== kl; log r = 0.5, -1")
for lr in (0.5, -1.0):
    show(f"k3({lr})", math.exp(-lr) - 1 + lr)
logp, ref = [-1, -2, -0.5, -0.2], [-1.5, -1, -0.5, -0.4]
k3 = [math.exp(-(a - b)) - 1 + (a - b) for a, b in zip(logp, ref)]
show("k3 rows (3 + 1 tokens)", k3)
show("kl_loss k3 token-mean", mean(k3))
show("k3 current_kl", (mean(k3[:3]) + k3[3]) / 2)
show("k3 rewards row0", [0 - 0.1 * k3[0], 0 - 0.1 * k3[1], 1 - 0.1 * k3[2]])
show("k3 rewards row1", [0.5 - 0.1 * k3[3]])

print("== adaptive kl controller")
beta = 0.2
for kl in (8.0, 5.4):
    e = max(-0.2, min(0.2, kl / 6 - 1))
    beta *= 1 + e * 256 / 10000
    show(f"beta after kl={kl}", beta)

print("== lagrange")
show("exp(0.2)", math.exp(0.2))
show("exp(0.1)", math.exp(0.1))
