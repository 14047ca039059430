"""NiFi's SFTP processors (ListSFTP, FetchSFTP, PutSFTP), on paramiko.

paramiko is an optional extra (``pip install 'flowcore[sftp]'``), imported when a processor
connects, so ``import processors`` does not need it.
"""
