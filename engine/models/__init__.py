"""The decoder lab's model and its training loop: `DecoderConfig` (engine/models/config.py),
`Decoder` (engine/models/decoder.py, attention in engine/models/attention.py) and `train`
(engine/models/train.py)."""

from engine.models.config import DecoderConfig
from engine.models.decoder import Decoder, DecoderPass

__all__ = ["Decoder", "DecoderConfig", "DecoderPass"]
