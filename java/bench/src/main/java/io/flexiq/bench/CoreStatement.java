package io.flexiq.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One of the native core's SQL statements, read from its file and prepared over JDBC, so that
 * the raw-SQL figures run exactly what the core runs. Numbered parameters ($1, used once or
 * more) become JDBC's positional ?s.
 */
final class CoreStatement implements AutoCloseable {
    private static final Path SQL = Path.of(System.getProperty("flexiq.sql.dir", "native/flexiq-core/sql"));

    final PreparedStatement prepared;
    /** The core parameter number of each JDBC parameter, in order. */
    private final List<Integer> numbers = new ArrayList<>();

    CoreStatement(Connection connection, String file, String schema) throws Exception {
        // As the core runs its statements on an application's connection: new jobs are
        // announced within the statement.
        String sql = Files.readString(SQL.resolve(file)).replace("{schema}", schema).replace("{announce}", "true");
        // Comments go first: their $n are not parameters.
        sql = sql.replaceAll("(?m)--.*$", "");
        Matcher m = Pattern.compile("\\$(\\d+)").matcher(sql);
        StringBuilder jdbc = new StringBuilder();
        while (m.find()) {
            numbers.add(Integer.parseInt(m.group(1)));
            m.appendReplacement(jdbc, "?");
        }
        m.appendTail(jdbc);
        prepared = connection.prepareStatement(jdbc.toString());
    }

    /** The highest parameter number the statement uses: how many parameters it takes. */
    int parameterCount() {
        return numbers.stream().mapToInt(Integer::intValue).max().orElse(0);
    }

    void setArray(int number, Array value) throws SQLException {
        for (int i = 0; i < numbers.size(); i++) {
            if (numbers.get(i) == number) {
                prepared.setArray(i + 1, value);
            }
        }
    }

    void setLong(int number, long value) throws SQLException {
        for (int i = 0; i < numbers.size(); i++) {
            if (numbers.get(i) == number) {
                prepared.setLong(i + 1, value);
            }
        }
    }

    @Override
    public void close() throws SQLException {
        prepared.close();
    }
}
