"""What q1_logreg's feedback says of a training loop's known mistakes: the hints for what it
raised, and the advice for each mistake ``logreg_diagnosis.diagnose`` recognises by replaying
it."""

from __future__ import annotations

RAISE_HINTS = (
    ("leaf Variable that requires grad is being used in an in-place operation",
     "update-outside-no-grad",
     "The in-place update of w or b ran while autograd was recording: put the two updates "
     "inside `with torch.no_grad():`."),
    ("NoneType", "update-outside-no-grad",
     "A gradient was None: `w = w - lr * w.grad` outside torch.no_grad() makes w a non-leaf, so "
     "the next backward leaves w.grad empty. Update in place under `with torch.no_grad():`."),
)

MISTAKES = {
    "not-cleared": "The losses match training whose gradients were never cleared: each backward "
                   "added to the previous w.grad and b.grad. Set w.grad = None and b.grad = None "
                   "(or call zero_()) before each backward.",
    "w-not-cleared": "The losses match training that cleared b.grad but never w.grad: each "
                     "backward added to the previous w.grad, so w moves by the running sum of "
                     "its gradients. Clear both (w.grad = None and b.grad = None, or zero_() "
                     "on each) before each backward.",
    "b-not-cleared": "The losses match training that cleared w.grad but never b.grad: each "
                     "backward added to the previous b.grad, so b moves by the running sum of "
                     "its gradients. Clear both (w.grad = None and b.grad = None, or zero_() "
                     "on each) before each backward.",
    "loss-after-update": "The losses match the loss measured after each update: record the loss "
                         "of the forward pass that the update uses, before changing w and b.",
    "sum-not-mean": "The losses match a summed loss: the binary cross-entropy must be averaged "
                    "over the m examples (the default reduction='mean').",
    "lr-ignored": "The losses match training with the lesson's lr=0.5, not the lr argument: use "
                  "the lr parameter in the update.",
    "sigmoid-log": "The losses match sigmoid followed by log, which loses precision when "
                   "probabilities round to 0 or 1: use F.binary_cross_entropy_with_logits on the "
                   "raw logits.",
    "sigmoid-bce": "The losses match F.binary_cross_entropy(torch.sigmoid(z), y), a sigmoid "
                   "then log: in float32 sigmoid(z) rounds to exactly 1 (or 0) past a logit of "
                   "about 17, its log is then clamped at -100, so a wrongly classified row "
                   "costs a flat 100 and gives no gradient. Use "
                   "F.binary_cross_entropy_with_logits on the raw logits, exact for any logit.",
    "logits-clamped": "The losses match a loss on logits clamped to [-30, 30]: past the clamp a "
                      "misclassified example's loss stops growing and its gradient is 0, so "
                      "training ignores it. F.binary_cross_entropy_with_logits is exact for any "
                      "logit: pass it the raw X @ w + b.",
    "bias-left-out": "The losses match training in which b stays at its starting 0, so the "
                     "logits are X @ w, the NumPy series' model without a bias: b was left out "
                     "of the logits or never updated, and the boundary is forced through the "
                     "origin. Compute the logits as X @ w + b and update b with w each step "
                     "(b -= lr * b.grad).",
}

#: What a run whose parameters never left their starting zeros is told (``{}``: which of them):
#: a fact, then the usual reasons as questions, since any of them leaves the same zeros
NEVER_UPDATED_QUESTIONS = ("Is the gradient cleared between the backward and the update, the "
                           "update skipped or made with an old gradient, or that parameter left "
                           "out of it?")
NEVER_UPDATED = ("{} never changed from the starting zeros: no update reached it. "
                 + NEVER_UPDATED_QUESTIONS)

#: What a wrong run no replayed mistake explains is told.
UNEXPLAINED = ("Compare your loop with the contract: zeros for w and b, the mean loss on "
               "X @ w + b, clear, backward, update under no_grad, record the loss before it.")
