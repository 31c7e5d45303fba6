"""The gradients lab's claims as the trace declares them (``tracefile.claims``), in page order:
words, section and rule in words. The rules as code, which decide the verdicts, are
registered with their experiments (engine/experiments/gradient_flow/). Words and rules hold no
digits.
"""

from __future__ import annotations

from tracefile.claims import Claim, RuleChange

CLAIMS = (
    Claim("plain-degrades",
          "A deeper plain network trains to a higher loss than a shallower one", "training",
          "Plain stacks with the default initialization at each depth's best learning rate: "
          "supports when some step up in depth ends worse (every seed of the deeper stack above "
          "every seed of the shallower); contradicts when every step up ends better; "
          "inconclusive otherwise."),
    Claim("residual-trains-deeper",
          "With residual connections a deep stack trains where a plain one does not",
          "training",
          "At the deepest depth, the residual stack at the standard start for a stack without "
          "norms (output projections scaled down for depth, as GPT-2 does) against the plain "
          "stack at the best of its starts, each at its best learning rate: supports when "
          "every residual seed ends below every plain seed, contradicts when the reverse "
          "holds, inconclusive otherwise.",
          changes=(RuleChange(
              "At the deepest depth, residual and plain stacks with the same default "
              "initialization, each at its best learning rate: supports when every residual "
              "seed ends below every plain seed, contradicts when the reverse holds, "
              "inconclusive otherwise. The default start makes a residual stack without norms "
              "diverge, so this rule judged the residual path at a start nobody gives one.",
              "contradicts", "3017a1f"),)),
    Claim("identity-start-helps",
          "Starting every residual branch at zero trains a deep stack better than the "
          "standard initializations", "training",
          "At the deepest depth, residual stacks whose output projections start at zero against "
          "the better of the two other starts (the default, and the one scaled down for depth "
          "as GPT-2 does), each at its best learning rate: supports when every seed of the "
          "zero start ends lower, contradicts when every seed of the other does, inconclusive "
          "otherwise.",
          changes=(RuleChange(
              "At the deepest depth, residual stacks whose output projections start at zero "
              "against the default initialization, each at its best learning rate: supports "
              "when every seed of the zero start ends lower, contradicts when every seed of the "
              "default one does, inconclusive otherwise. The default start diverged at every "
              "rate, so this rule could not come out against the zero start.",
              "supports", "67f00de"),)),
    Claim("identity-hard-for-plain",
          "A randomly initialized nonlinear layer finds it hard to learn the identity, while a "
          "residual block starts there", "identity",
          "One block fitted to its own input, each model at its best learning rate: supports "
          "when the residual block with a zero output projection ends at exactly zero loss and "
          "every seed of the residual block from the plain block's own initialization ends "
          "below every seed of the plain block; contradicts when the plain block's median ends "
          "at or below that residual block's; inconclusive otherwise."),
    Claim("clipping-tames-explosion",
          "The identity path keeps gradients from vanishing but not from exploding; clipping "
          "the gradient tames the explosion", "clipping",
          "Residual stacks with the default start, unclipped and with every update's gradient "
          "norm clipped, and residual stacks whose branches start at zero as the control, each "
          "at its best learning rate at every depth, over a range of rates low enough for the "
          "unclipped stack to train if any rate lets it: inconclusive unless the control "
          "trains (no seed diverges and every seed ends below the loss of predicting zero); "
          "then contradicts when the clipped stack diverges in some seed at some depth, or "
          "when at every depth every seed of the unclipped stack ends below every seed of the "
          "clipped one; supports when at every depth the clipped stack trains and every seed "
          "of it ends below every seed of the unclipped stack; qualifies otherwise.",
          changes=(RuleChange(
              "The same three models, each at its best learning rate at every depth: "
              "inconclusive unless the control trains (every seed ends below the loss of "
              "predicting zero) and the unclipped stack diverges in every seed at every depth; "
              "then contradicts when the clipped stack diverges in some seed at some depth, "
              "supports when every seed of it ends below the loss of predicting zero at every "
              "depth, and qualifies when it diverges nowhere but does not learn at some depth. "
              "The grid's lowest rate decided whether the unclipped stack diverged everywhere: "
              "at lower rates the shallower stack trains without clipping.",
              "qualifies", "ede5cb6"),)),
)
