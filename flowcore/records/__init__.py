"""Records: NiFi's record schema, readers and writers as plain codecs over Arrow.

A reader streams bounded ``pyarrow.RecordBatch``es from a binary stream; a writer takes record
batches and writes NiFi's bytes. The NiFi type of every field travels in the Arrow schema
(``schema.RecordSchema.to_arrow``). Services (JsonTreeReader, CSVReader...) wrap these codecs;
docs/records.md maps types and options.

Modules: ``schema`` (types), ``avro_schema`` (Avro schema text), ``inference``, ``values``
(coercion), ``formats`` (Java's text forms), ``json_reader``/``json_writer``,
``csv_reader``/``csv_writer`` (``csv_format`` holds the dialects), ``avro_codec``,
``parquet_codec``, ``text_writer`` (FreeFormText).
"""
