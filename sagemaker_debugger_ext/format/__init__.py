"""The smdebug 1.0.34 on-disk format: TFRecord framing, protobuf wire codec, trial layout.

Public API: :class:`StepWriter`, :func:`write_collections_file`,
:func:`write_training_end`, :class:`TensorBoardWriter`, :func:`safe_join`,
:func:`read_records` and :func:`decode_tensor_record`. This package knows nothing of
SageMaker and has no protobuf dependency.
"""

from __future__ import annotations

from ._background import BackgroundWriter
from ._crc import MAGIC_FOOTER, crc32c_python, masked_crc32c
from ._decode import DecodedTensor, decode_tensor_record
from ._dtypes import DataType
from ._events import decode_event, decode_histogram
from ._layout import (
    END_OF_JOB_FILE,
    collections_key,
    event_key,
    index_key,
    parse_collections_key,
    parse_index_key,
    safe_join,
)
from ._tensorboard import TensorBoardWriter
from ._tfrecord import FooterCheck, Record, RecordWriter, read_record_at, read_records
from ._writer import StepWriter, write_collections_file, write_training_end

__all__ = [
    "END_OF_JOB_FILE",
    "MAGIC_FOOTER",
    "BackgroundWriter",
    "DataType",
    "DecodedTensor",
    "FooterCheck",
    "Record",
    "RecordWriter",
    "StepWriter",
    "TensorBoardWriter",
    "collections_key",
    "crc32c_python",
    "decode_event",
    "decode_histogram",
    "decode_tensor_record",
    "event_key",
    "index_key",
    "masked_crc32c",
    "parse_collections_key",
    "parse_index_key",
    "read_record_at",
    "read_records",
    "safe_join",
    "write_collections_file",
    "write_training_end",
]
