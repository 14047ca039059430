"""NiFi's SQL processors and DBCPConnectionPool, over SQLAlchemy.

One module per processor (``execute_sql``, ``query_database_table``, ``put_database_record``
...), the pool service (``dbcp``), JDBC URL mapping (``jdbc_url``) and NiFi's JDBC-to-Avro type
mapping (``avro_types``). Drivers are imported where a pool is enabled, so importing this
package needs none of them (``pip install 'flowcore[sql]'`` adds PostgreSQL's).
"""
